package slack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Signer builds the signed requests Slack sends to an app in Events API
// (HTTP) mode: event callbacks, url_verification, interactivity payloads
// and slash commands, with X-Slack-Request-Timestamp and X-Slack-Signature
// ("v0=" + hex HMAC-SHA256 of "v0:<timestamp>:<body>" keyed by the signing
// secret). Its requests work with a handler's ServeHTTP (httptest) and with
// an http.Client. Payloads carry the fake's team, app and response_urls.
type Signer struct {
	s *Server
	// Secret is the signing secret the requests are signed with.
	Secret string
	// At is the request timestamp; zero means now. Set it minutes in the
	// past for a stale request.
	At time.Time
	// Forged signs a different body from the one sent, as an attacker
	// who changes a signed request would.
	Forged bool
	// RetryNum, when positive, adds X-Slack-Retry-Num and
	// X-Slack-Retry-Reason: http_timeout, as Slack's redeliveries carry.
	RetryNum int
}

// Signer returns a Signer for the signing secret.
func (s *Server) Signer(secret string) Signer { return Signer{s: s, Secret: secret} }

// Stale returns a copy of g whose requests are timestamped age ago.
func (g Signer) Stale(age time.Duration) Signer {
	g.At = time.Now().Add(-age)
	return g
}

// Forge returns a copy of g whose signatures do not match their bodies.
func (g Signer) Forge() Signer {
	g.Forged = true
	return g
}

// Retry returns a copy of g whose requests are Slack's n-th redelivery.
func (g Signer) Retry(n int) Signer {
	g.RetryNum = n
	return g
}

// Sign returns the X-Slack-Signature of body at timestamp (Unix seconds).
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// EventCallback returns a signed event_callback POST of ev to target, and
// the event's event_id and ts. Sending the same event again (a Slack
// retry) means passing an Event with that EventID and TS.
func (g Signer) EventCallback(target string, ev Event) (*http.Request, string, string) {
	g.s.mu.Lock()
	body, id, ts := g.s.eventCallbackLocked(ev)
	g.s.mu.Unlock()
	return g.request(target, "application/json", body), id, ts
}

// URLVerification returns a signed url_verification POST to target; the
// app must answer with challenge.
func (g Signer) URLVerification(target, challenge string) *http.Request {
	body, _ := json.Marshal(map[string]string{
		"token": g.s.opts.VerificationToken, "challenge": challenge, "type": "url_verification",
	})
	return g.request(target, "application/json", body)
}

// BlockAction returns a signed interactivity POST to target: a form with
// the block_actions payload in its "payload" field.
func (g Signer) BlockAction(target string, a BlockAction) *http.Request {
	g.s.mu.Lock()
	payload := g.s.blockActionLocked(a)
	g.s.mu.Unlock()
	body := url.Values{"payload": {string(payload)}}.Encode()
	return g.request(target, "application/x-www-form-urlencoded", []byte(body))
}

// SlashCommand returns a signed slash-command POST to target, a form as
// Slack sends it.
func (g Signer) SlashCommand(target string, c SlashCommand) *http.Request {
	g.s.mu.Lock()
	fields := g.s.slashCommandLocked(c)
	g.s.mu.Unlock()
	form := url.Values{}
	for k, v := range fields {
		form.Set(k, v)
	}
	return g.request(target, "application/x-www-form-urlencoded", []byte(form.Encode()))
}

func (g Signer) request(target, contentType string, body []byte) *http.Request {
	at := g.At
	if at.IsZero() {
		at = time.Now()
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	signed := body
	if g.Forged {
		signed = append(bytes.Clone(body), ' ')
	}
	r, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		// A target that does not parse is the test's own mistake; an
		// unroutable request makes it fail where it is sent.
		r = &http.Request{Method: http.MethodPost, URL: &url.URL{}, Header: http.Header{}, Body: http.NoBody}
	}
	r.Header.Set("Content-Type", contentType)
	r.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	r.Header.Set("X-Slack-Request-Timestamp", ts)
	r.Header.Set("X-Slack-Signature", Sign(g.Secret, ts, signed))
	if g.RetryNum > 0 {
		r.Header.Set("X-Slack-Retry-Num", strconv.Itoa(g.RetryNum))
		r.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	return r
}
