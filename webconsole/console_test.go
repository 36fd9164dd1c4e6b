package webconsole

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestSignInOnceThenPendingPage: a preview's GET does not use the link,
// the POST does, once; the cookie is HttpOnly and SameSite=Strict; the
// pending page shows the diff, escapes what the model wrote, and the
// sign-in is audited.
func TestSignInOnceThenPendingPage(t *testing.T) {
	h := newHarness(t)
	link := h.link(ann)
	if dm := h.chat.replies()[0].Conv; dm.Chat != "DUANN" {
		t.Errorf("link sent to %s; want ann's direct conversation", dm)
	}
	for range 2 { // a chat app's preview, then the person
		res, body := h.do(get(strings.TrimPrefix(link, origin), nil))
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `<form method="post" action="/web/signin">`) {
			t.Fatalf("GET link = %d %s; want the sign-in button", res.StatusCode, body)
		}
	}
	u, _ := url.Parse(link)
	res, body := h.do(post("/web/signin", url.Values{"t": {u.Query().Get("t")}}, nil))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/web/" {
		t.Fatalf("sign-in = %d %s; want 303 to /web/", res.StatusCode, body)
	}
	ck := res.Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Name != "gatehouse" || ck.MaxAge != 3600 {
		t.Errorf("cookie = %+v; want HttpOnly, SameSite=Strict, an hour", ck)
	}
	res, _ = h.do(post("/web/signin", url.Values{"t": {u.Query().Get("t")}}, nil))
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("the same link again = %d; want 403", res.StatusCode)
	}
	res, body = h.do(get("/web/", ck))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pending page = %d %s", res.StatusCode, body)
	}
	for _, want := range []string{"K7Q2MX9P", "notes.txt", `<span class="d">-old &lt;b&gt;line&lt;/b&gt;</span>`, `<span class="a">+new line</span>`,
		"echo &lt;script&gt;alert(1)&lt;/script&gt;", "ops", "Approve always"} {
		if !strings.Contains(body, want) {
			t.Errorf("pending page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>") || strings.Index(body, "K7Q2MX9P") > strings.Index(body, "OPSAAAAA") {
		t.Errorf("pending page: a script tag, or not newest first:\n%s", body)
	}
	entries, err := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "signed-in"})
	if err != nil || len(entries) != 1 || entries[0].RequestedBy != ann || entries[0].Conv != "web:"+string(ann) {
		t.Errorf("audit of the sign-in = %+v, %v; want one entry for ann on web", entries, err)
	}
}

// TestApproveFromThePage: the form's token and a same-origin POST reach
// the broker once, as the signed-in person.
func TestApproveFromThePage(t *testing.T) {
	h := newHarness(t)
	ck := h.signIn(ann)
	_, body := h.do(get("/web/", ck))
	form := url.Values{"csrf": {csrfOf(t, body)}, "decision": {"approve"}}
	res, body := h.do(post("/web/r/K7Q2MX9P", form, ck))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "approved") {
		t.Fatalf("approve = %d %s", res.StatusCode, body)
	}
	form.Set("decision", "deny")
	form.Set("reason", "not <now>")
	h.do(post("/web/r/OPSAAAAA", form, ck))
	got := h.appr.decided()
	if len(got) != 2 || got[0] != "slack:UANN K7Q2MX9P 1 " || got[1] != "slack:UANN OPSAAAAA "+string(rune('0'+core.DecisionDeny))+" not <now>" {
		t.Errorf("decisions = %q; want ann's approve and deny with its reason", got)
	}
}

// TestRefusals: every request that must change nothing is refused with a
// plain 4xx page, and the broker hears of none of them.
func TestRefusals(t *testing.T) {
	h := newHarness(t)
	ck := h.signIn(ann)
	ck2 := h.signIn(ann) // another session of the same person
	_, body := h.do(get("/web/", ck2))
	otherCSRF := csrfOf(t, body)
	_, body = h.do(get("/web/", ck))
	csrf := csrfOf(t, body)
	ok := url.Values{"csrf": {csrf}, "decision": {"approve"}}
	expired := &http.Cookie{Name: ck.Name, Value: strings.Repeat("a", 64)}
	if err := h.store.AddWebSession(context.Background(), record.WebSession{Hash: hash(expired.Value), Identity: ann,
		Created: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	with := func(r *http.Request, f func(r *http.Request)) *http.Request { f(r); return r }
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"no Sec-Fetch-Site", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Header.Del("Sec-Fetch-Site") }), 403},
		{"cross-site", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }), 403},
		{"same-site", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") }), 403},
		{"another port's Origin", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:9091") }), 403},
		{"https Origin", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Header.Set("Origin", "https://127.0.0.1:9090") }), 403},
		{"null Origin", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Header.Set("Origin", "null") }), 403},
		{"no session", post("/web/r/K7Q2MX9P", ok, nil), 401},
		{"forged session", post("/web/r/K7Q2MX9P", ok, &http.Cookie{Name: ck.Name, Value: strings.Repeat("f", 64)}), 401},
		{"expired session", post("/web/r/K7Q2MX9P", ok, expired), 401},
		{"no CSRF token", post("/web/r/K7Q2MX9P", url.Values{"decision": {"approve"}}, ck), 403},
		{"another session's CSRF token", post("/web/r/K7Q2MX9P", url.Values{"csrf": {otherCSRF}, "decision": {"approve"}}, ck), 403},
		{"the cookie as CSRF token", post("/web/r/K7Q2MX9P", url.Values{"csrf": {ck.Value}, "decision": {"approve"}}, ck), 403},
		{"GET approves nothing", get("/web/r/K7Q2MX9P?decision=approve&csrf="+csrf, ck), 200},
		{"pages need a session", get("/web/", nil), 401},
		{"huge query string", get("/web/?q="+strings.Repeat("x", 5000), ck), 414},
		{"unknown path", get("/web/nope", ck), 404},
		{"unknown path outside", get("/web/../etc/passwd", ck), 404},
		{"cross-site sign-in", with(post("/web/signin", url.Values{"t": {strings.Repeat("0", 64)}}, nil), func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }), 403},
		{"unknown link", post("/web/signin", url.Values{"t": {strings.Repeat("0", 64)}}, nil), 403},
		{"huge form", post("/web/r/K7Q2MX9P", url.Values{"csrf": {csrf}, "decision": {"approve"}, "reason": {strings.Repeat("x", 20000)}}, ck), 400},
		{"sign out cross-site", with(post("/web/signout", url.Values{"csrf": {csrf}}, ck), func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }), 403},
		{"sign out without token", post("/web/signout", nil, ck), 403},
		{"PUT", with(post("/web/r/K7Q2MX9P", ok, ck), func(r *http.Request) { r.Method = http.MethodPut }), 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := h.do(tt.req)
			if res.StatusCode != tt.want {
				t.Errorf("status = %d %s; want %d", res.StatusCode, body, tt.want)
			}
			for k, v := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store", "Content-Security-Policy": csp} {
				if res.Header.Get(k) != v {
					t.Errorf("%s = %q; want %q", k, res.Header.Get(k), v)
				}
			}
			if tt.want >= 400 && (strings.Contains(body, "K7Q2MX9P") || strings.Contains(body, csrf) || strings.Contains(body, "<")) {
				t.Errorf("a refusal shows more than a plain sentence: %s", body)
			}
		})
	}
	if got := h.appr.decided(); len(got) != 0 {
		t.Errorf("refused requests reached the broker: %q", got)
	}
	if res, _ := h.do(get("/web/", ck)); res.StatusCode != http.StatusOK {
		t.Errorf("the session was ended by a refused sign-out: %d", res.StatusCode)
	}
}

// TestNoMarkupConversion: no string becomes markup but the package's
// constants, so everything else a page shows is escaped.
func TestNoMarkupConversion(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "markup(") && !strings.Contains(l, `markup("`) && !strings.Contains(l, "markup(`") {
				t.Errorf("%s:%d converts a value to markup: %s", f, i+1, strings.TrimSpace(l))
			}
		}
	}
	var d doc
	d.el("<p>", "</p>", `<script>alert("x")</script>&'`)
	if got := d.b.String(); got != "<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;</p>" {
		t.Errorf("escaped text = %s", got)
	}
}
