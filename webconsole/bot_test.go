package webconsole_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/logging"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// The people of the tests, on the fake Telegram: ann approves
// everything, bob only the ops group's requests (its profile's
// approver), mel is an allowed member who approves nothing.
const (
	annID, bobID, melID = 42, 44, 43
	opsGroup            = -1001
)

// fakes makes a temporary directory with a workspace whose notes.txt
// holds notes, the fake Telegram and the fake OpenAI.
func fakes(t *testing.T, notes string) (dir, ws, file string, tg *faketg.Server, ai *fakeoai.Server) {
	t.Helper()
	dir = t.TempDir()
	ws = filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(file, []byte(notes), 0o600); err != nil {
		t.Fatal(err)
	}
	tg = faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	return dir, ws, file, tg, fakeoai.Start(t)
}

// botConfig is a configuration on the fakes with the web console on addr.
func botConfig(aiURL string, tg *faketg.Server, ws, storeYAML, addr string) string {
	return `
llm: {providers: [{name: fake, base_url: "` + aiURL + `", model: fake-model}]}
gateways:
  console: {enabled: false}
  telegram: {token: "` + tg.Token() + `", api_url: "` + tg.URL() + `", allow: ["42", "43", "44"]}
hitl: {approvers: ["telegram:42"]}
profiles: [{name: ops, match: ["telegram:-1001*"], approvers: ["telegram:44"]}]
policy: {rules: [{tool: write_file, decision: approve}, {tool: "*", decision: allow}]}
tools: {workspace: "` + ws + `"}
store: ` + storeYAML + `
http: {listen: "` + addr + `", console: true, console_session: 1h}
`
}

// startBot runs the bot of yaml until the test ends.
func startBot(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	sec := secrets.New(cfg.Secrets()...)
	log := logging.New(io.Discard, logging.Options{Level: "error", Format: "json", Secrets: sec})
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Log: log, Secrets: sec})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	t.Cleanup(func() { cancel(); <-done; a.Close() })
	testutil.WaitFor(t, "the console served", func() bool {
		res, err := http.Get("http://" + cfg.HTTP.Listen + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return cfg
}

// say sends text from user id in their private chat (or chat) and
// returns how many messages the bot had sent before.
func say(tg *faketg.Server, id int, chat int64, text string) int {
	before := len(tg.Sent())
	typ := "private"
	if chat < 0 {
		typ = "supergroup"
	}
	tg.InjectMessage(faketg.Message{From: &faketg.User{ID: int64(id), FirstName: "P"}, Chat: faketg.Chat{ID: chat, Type: typ}, Text: text})
	return before
}

// waitSent waits for a message of the bot to chat containing want.
func waitSent(t *testing.T, tg *faketg.Server, from int, chat int64, want string) string {
	t.Helper()
	var got string
	testutil.WaitFor(t, "the bot to say "+want, func() bool {
		for _, s := range tg.Sent()[from:] {
			if s.ChatID == chat && strings.Contains(s.Plain, want) {
				got = s.Plain
				return true
			}
		}
		return false
	})
	return got
}

// tokenRE finds an approval's token in a request.
var tokenRE = regexp.MustCompile(`/approve ([2-9A-Z]{8})`)

// client is a browser as far as the console can tell: same-origin
// headers, its cookies, no redirects followed.
type client struct {
	t      *testing.T
	origin string
	cookie *http.Cookie
}

func (c *client) do(method, path string, form url.Values) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.origin+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", c.origin)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, ck := range res.Cookies() {
		if ck.Value != "" {
			c.cookie = ck
		}
	}
	return res.StatusCode, string(b)
}

// signIn uses link and returns the CSRF token of the pending page.
func (c *client) signIn(link string) string {
	c.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		c.t.Fatal(err)
	}
	if code, body := c.do(http.MethodPost, "/web/signin", url.Values{"t": {u.Query().Get("t")}}); code != http.StatusSeeOther {
		c.t.Fatalf("sign-in = %d %s", code, body)
	}
	code, body := c.do(http.MethodGet, "/web/", nil)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		c.t.Fatalf("pending page = %d %s", code, body)
	}
	return m[1]
}
