package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	hookBotToken = "xoxb-1-HOOK-slack-bot-token"
	hookAppToken = "xapp-1-A0FAKE-HOOK-slack-app-token"
	hookSecret   = "hook-secret-0123456789abcdef"
)

// webhookBot is the binary on the fake Slack and the fake model, with
// the webhooks of extra (a YAML list) served on its http.listen.
type webhookBot struct {
	p      *botProc
	sl     *fakeslack.Server
	model  *fakeopenai.Server
	listen string
	dir    string // the bot's directory: config.yaml, gatehouse.db
	config string // config.yaml as written
}

func startWebhookBot(t *testing.T, hooks string) *webhookBot {
	t.Helper()
	b := &webhookBot{sl: fakeslack.New(fakeslack.Options{BotToken: hookBotToken, AppToken: hookAppToken}), listen: freeAddr(t)}
	t.Cleanup(b.sl.Close)
	b.model = startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: looked into it") })
	b.model.Record(true)
	dir := t.TempDir()
	b.dir = dir
	b.config = fmt.Sprintf(`llm:
  providers: [{name: fake, base_url: %s, api_key: sk-unused, model: fake-model}]
gateways:
  console: {enabled: false}
  slack: {bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q, allow: ["U1"]}
hitl: {approvers: ["slack:U1"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: %q}
log: {level: debug, format: json}
webhooks:
%s`, b.model.URL(), b.sl.URL()+"/api/", filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"), b.listen, hooks)
	writeFile(t, dir, "config.yaml", b.config)
	b.p = startBot(t, dir, baseEnv(dir, "SLACK_BOT_TOKEN="+hookBotToken, "SLACK_APP_TOKEN="+hookAppToken, "HOOK_TOKEN="+hookSecret))
	testutil.WaitFor(t, "the socket mode connection", func() bool { return b.sl.Connections() == 1 })
	waitListen(t, b.listen)
	t.Cleanup(func() {
		noSecretIn(t, "the bot's log", b.p.stderr.String(), hookSecret)
	})
	return b
}

// waitListen waits until the bot answers on its http.listen.
func waitListen(t *testing.T, listen string) {
	t.Helper()
	testutil.WaitFor(t, "http.listen", func() bool {
		resp, err := http.Get("http://" + listen + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
}

// threads returns the channel's top-level posts (the incidents' first
// messages) and, by their ts, the replies in their threads.
func (b *webhookBot) threads(channel string) (parents []fakeslack.Post, replies map[string][]fakeslack.Post) {
	replies = map[string][]fakeslack.Post{}
	for _, p := range b.sl.Posts(channel) {
		if p.ThreadTS == "" {
			parents = append(parents, p)
		} else {
			replies[p.ThreadTS] = append(replies[p.ThreadTS], p)
		}
	}
	return parents, replies
}

// alertmanagerBinary is Debian's prometheus-alertmanager or an
// alertmanager on PATH; the test skips, saying so, without one.
func alertmanagerBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Alertmanager: install Debian's prometheus-alertmanager (.ci/run does) to run this test")
	return ""
}

// flakyProxy forwards to target; the first forwarded request's answer is
// replaced by a 500 (the bot took it, its answer was lost), so the sender
// retries. It counts the requests and their answers from the bot.
type flakyProxy struct {
	target   string
	requests atomic.Int32
	mu       sync.Mutex
	answers  []int
}

func (f *flakyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequest(r.Method, f.target+r.URL.Path, strings.NewReader(string(body)))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp.Body.Close()
	f.mu.Lock()
	f.answers = append(f.answers, resp.StatusCode)
	f.mu.Unlock()
	if n == 1 {
		http.Error(w, "answer lost", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(resp.StatusCode)
}

func (f *flakyProxy) got() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.answers...)
}

// TestAlertmanagerWebhook is issue 31 against the real Alertmanager: an
// alert posted to its API is routed to the bot's webhook with the bearer
// of its http_config; the turn runs once in a new thread of the
// configured conversation; Alertmanager's retry of the same notification
// (its first answer lost on the way back) starts nothing; the alert's
// resolution lands in the same thread.
func TestAlertmanagerWebhook(t *testing.T) {
	am := alertmanagerBinary(t)
	b := startWebhookBot(t, `  - name: alerts
    format: alertmanager
    secret: ${HOOK_TOKEN}
    conversation: slack:C0OPS
    prompt: An alert changed state. Investigate.
    events: [firing, resolved]
`)
	proxy := &flakyProxy{target: "http://" + b.listen}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)
	amAddr := freeAddr(t)
	dir := t.TempDir()
	writeFile(t, dir, "alertmanager.yml", fmt.Sprintf(`route:
  receiver: gatehouse
  group_by: [alertname]
  group_wait: 100ms
  group_interval: 500ms
  repeat_interval: 1h
receivers:
  - name: gatehouse
    webhook_configs:
      - url: %s/hooks/alerts
        send_resolved: true
        http_config:
          authorization: {type: Bearer, credentials: %q}
`, ps.URL, hookSecret))
	cmd := exec.Command(am, "--config.file="+filepath.Join(dir, "alertmanager.yml"), "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")
	amLog := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = amLog, amLog
	if err := cmd.Start(); err != nil {
		t.Fatalf("start alertmanager: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck // ours, by its pid
		cmd.Wait()         //nolint:errcheck // killed
		if t.Failed() {
			t.Logf("alertmanager:\n%s", amLog.String())
		}
	})
	postAlert := func(ends string) {
		t.Helper()
		body := `[{"labels":{"alertname":"DiskFull","instance":"db1"},"annotations":{"summary":"disk 95% full"}` + ends + `}]`
		var resp *http.Response
		testutil.WaitFor(t, "Alertmanager's API", func() bool {
			var err error
			resp, err = http.Post("http://"+amAddr+"/api/v2/alerts", "application/json", strings.NewReader(body))
			return err == nil
		})
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/v2/alerts: %s", resp.Status)
		}
	}
	postAlert("")
	testutil.WaitFor(t, "Alertmanager's retry after the lost answer", func() bool { return len(proxy.got()) >= 2 })
	testutil.WaitFor(t, "the turn's reply in the incident's thread", func() bool {
		_, replies := b.threads("C0OPS")
		return len(replies) == 1
	})
	if got := proxy.got(); got[0] != http.StatusAccepted || got[1] != http.StatusOK {
		t.Fatalf("the bot answered %v; want 202 then 200 (the retry a duplicate)", got)
	}
	parents, replies := b.threads("C0OPS")
	if len(parents) != 1 || !strings.Contains(parents[0].Text, "firing: DiskFull") {
		t.Fatalf("top-level posts %+v; want one opening the incident", parents)
	}
	thread := parents[0].TS
	if n := len(replies[thread]); n != 1 {
		t.Fatalf("replies in the thread: %d; want 1 (the retry started nothing)", n)
	}
	first := b.model.Requests()
	if len(first) != 1 || !strings.Contains(first[0].LastUser(), "DiskFull") || !strings.Contains(first[0].LastUser(), "not instructions") {
		t.Fatalf("model requests %d; want one with the quoted alert", len(first))
	}

	postAlert(fmt.Sprintf(`,"startsAt":%q,"endsAt":%q`, time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)))
	testutil.WaitFor(t, "the resolution's reply in the same thread", func() bool {
		_, replies := b.threads("C0OPS")
		return len(replies[thread]) == 2
	})
	parents, _ = b.threads("C0OPS")
	if len(parents) != 1 {
		t.Fatalf("top-level posts %d after the resolution; want 1 (same thread)", len(parents))
	}
	if last := b.model.Requests(); !strings.Contains(last[len(last)-1].LastUser(), "resolved") {
		t.Errorf("the resolution's turn does not say resolved: %q", last[len(last)-1].LastUser())
	}
}
