package app

import (
	"mime"
	"net/http"
)

// crossSite says why r is a request that a web page could make a browser
// send from another site, or "" when it is not one. Such a request must
// not change anything: a page open in a browser on the bot's host (or on
// its network, with the Docker image's 0.0.0.0) could otherwise trigger
// it. A browser sends Sec-Fetch-Site with every request it makes
// (same-origin, same-site, cross-site, or none when a person typed the
// address); it sends Origin with a POST made from a page; and a form, or
// a script without a CORS preflight (which this server never answers),
// can only post the content types a form can. curl and scripts send none
// of these.
func crossSite(r *http.Request) string {
	for _, site := range r.Header.Values("Sec-Fetch-Site") {
		if site != "same-origin" && site != "none" {
			return "Sec-Fetch-Site is neither same-origin nor none"
		}
	}
	if _, ok := r.Header["Origin"]; ok {
		return "the request has an Origin header"
	}
	for _, ct := range r.Header.Values("Content-Type") {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return "unreadable Content-Type"
		}
		switch mt {
		case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
			return "Content-Type " + mt + " is a form's"
		}
	}
	return ""
}
