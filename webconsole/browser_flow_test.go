package webconsole_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestBrowserApprovesAWrite is the web console in a real headless
// Chromium, through the fakes: a member who approves nothing gets no
// link; bob's session cannot approve what only ann may; ann's /web on
// Telegram gets a link, the browser signs in with it and lands on the
// pending page with the diff of the held write_file (screenshot at
// 390×844, a phone); another origin's page that auto-submits an approval
// changes nothing; Approve writes the file once and the chat shows the
// outcome; the same link again is refused.
func TestBrowserApprovesAWrite(t *testing.T) {
	ctx := browser(t)
	dir, ws, notes, tg, ai := fakes(t, "old line\nkept <b>line</b>\n")
	addr := freeAddr(t)
	origin := "http://" + addr
	cfg := startBot(t, botConfig(ai.URL(), tg, ws, `{dsn: "`+filepath.Join(dir, "gatehouse.db")+`"}`, addr))

	// mel asks for a write; it is held for ann.
	ai.Push(fakeoai.ToolCalls(fakeoai.Call{Name: "write_file", Args: `{"path":"notes.txt","content":"new line\nkept <b>line</b>\n"}`}), fakeoai.Text("notes updated"))
	req := waitSent(t, tg, say(tg, melID, melID, "update the notes"), melID, "/approve ")
	token := tokenRE.FindStringSubmatch(req)[1]

	// mel approves nothing: no link, anywhere.
	from := say(tg, melID, melID, "/web")
	waitSent(t, tg, from, melID, "Not authorised")
	if l, ok := linkIn(tg, melID, from); ok {
		t.Errorf("a member who approves nothing got a sign-in link: %s", l)
	}

	// A stranger's /web is a stranger's message: no link.
	from = say(tg, 99, 99, "/web")
	say(tg, melID, melID, "/web") // a marker: answered once the stranger's message was
	waitSent(t, tg, from, melID, "Not authorised")
	if l, ok := linkIn(tg, 99, from); ok {
		t.Errorf("a stranger got a sign-in link: %s", l)
	}

	// bob's session cannot approve ann's request.
	from = say(tg, bobID, bobID, "/web")
	waitSent(t, tg, from, bobID, "/web/signin?t=")
	bobLink, _ := linkIn(tg, bobID, from)
	bob := &client{t: t, origin: origin}
	csrf := bob.signIn(bobLink)
	if code, body := bob.do(http.MethodPost, "/web/r/"+token, url.Values{"csrf": {csrf}, "decision": {"approve"}}); !strings.Contains(body, "not authorised") {
		t.Errorf("bob's approval of ann's request = %d %s; want not authorised", code, body)
	}

	// ann signs in in the browser and sees the diff.
	from = say(tg, annID, annID, "/web")
	waitSent(t, tg, from, annID, "/web/signin?t=")
	link, _ := linkIn(tg, annID, from)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(link),
		chromedp.Click(chromedp.CSS(`form[action="/web/signin"] button`))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	body := waitText(t, ctx, "Pending approvals")
	for _, want := range []string{token, "-old line", "+new line", "kept <b>line</b>", "telegram:43", "Approve always"} {
		if !strings.Contains(body, want) {
			t.Errorf("the pending page lacks %q:\n%s", want, body)
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if w, h := rendered(t, shot); w != 390 || h != 844 {
		t.Errorf("screenshot %d×%d; want 390×844", w, h)
	}
	out := filepath.Join(artefacts(t), "webconsole-pending-390x844.png")
	if err := os.WriteFile(out, shot, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the pending page: %s", out)

	// Another origin's page posts an approval: refused, nothing runs.
	evil := attackerPage(origin + "/web/r/" + token)
	t.Cleanup(evil.Close)
	// Another port of the host is another origin of the same site (its
	// form comes with the cookie); localhost is another site.
	crossSite := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	for _, from := range []string{evil.URL, crossSite} {
		if err := chromedp.Do(ctx, chromedp.Navigate(from)); err != nil {
			t.Fatal(err)
		}
		waitText(t, ctx, "Refused")
		if b, _ := os.ReadFile(notes); !strings.HasPrefix(string(b), "old line") {
			t.Fatalf("the form of %s approved the write: %q", from, b)
		}
	}

	// The request's link in chat, followed from another site (a chat
	// app): the SameSite=Strict session still opens the request's page.
	page := regexp.MustCompile(`On the web: (http://\S+)`).FindStringSubmatch(req)
	if page == nil || page[1] != origin+"/web/r/"+token {
		t.Fatalf("the request in chat has no link to its page (%v):\n%s", page, req)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(crossSite+"/link"), chromedp.Click(chromedp.CSS("#l"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "Request "+token)

	// Approve: the file is written, once, and the chat hears of it.
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/web/"),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	waitText(t, ctx, "approved")
	testutil.WaitFor(t, "the file written", func() bool {
		b, _ := os.ReadFile(notes)
		return strings.HasPrefix(string(b), "new line")
	})
	waitSent(t, tg, 0, melID, "notes updated")

	// The conversations and the cluster: what a person said only for
	// those who approve the conversation.
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/web/conversations")); err != nil {
		t.Fatal(err)
	}
	if body := waitText(t, ctx, "telegram:43"); !strings.Contains(body, "update the notes") || !strings.Contains(body, "Usage today") {
		t.Errorf("ann's conversations page lacks mel's message or the usage:\n%s", body)
	}
	if _, body := bob.do(http.MethodGet, "/web/conversations", nil); !strings.Contains(body, "telegram:43") || strings.Contains(body, "update the notes") {
		t.Errorf("bob's conversations page shows what was said where he approves nothing:\n%s", body)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/web/cluster")); err != nil {
		t.Fatal(err)
	}
	if body := waitText(t, ctx, "Gateways"); !strings.Contains(body, "telegram: running") || !strings.Contains(body, "Instances") {
		t.Errorf("the cluster page lacks the gateways or the instances:\n%s", body)
	}

	// The same link again: refused.
	if err := chromedp.Do(ctx, chromedp.Navigate(link),
		chromedp.Click(chromedp.CSS(`form[action="/web/signin"] button`))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "used already")
	checkAudit(t, cfg, token)
}

// checkAudit reads the audit of token through a read-only handle on the
// bot's store: the write ran once, approved by ann via web.
func checkAudit(t *testing.T, cfg *config.Config, token string) {
	t.Helper()
	var entries []record.AuditEntry
	testutil.WaitFor(t, "the run audited", func() bool {
		db, err := storetable.OpenReadOnly(context.Background(), cfg)
		if err != nil {
			return false
		}
		defer db.Close()
		entries, err = db.QueryAudit(context.Background(), record.AuditFilter{Token: token})
		return err == nil && len(entries) > 0 && entries[len(entries)-1].Outcome == "executed"
	})
	n, via := 0, false
	for _, e := range entries {
		n += boolInt(e.Outcome == "executed")
		via = via || (e.Outcome == "approved" && e.ApprovedBy == core.Identity("telegram:42") && strings.Contains(e.Detail, "via web"))
	}
	if n != 1 || !via {
		t.Errorf("audit of %s = %+v; want one run, approved by telegram:42 via web", token, entries)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
