package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	_ "modernc.org/sqlite" // the bot's own driver, to read its database once it stopped

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// rss returns the resident set size of process pid, in bytes, from
// /proc/<pid>/status; the test skips without /proc.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// unsigned posts n bodies of size bytes to the webhook name without a
// bearer or signature (a wrong one every other time) and fails unless
// each is answered 401.
func unsigned(t *testing.T, b *webhookBot, name string, n, size int) {
	t.Helper()
	body := bytes.Repeat([]byte("x"), size)
	copy(body, `{"id":"flood","pad":"`)
	body[len(body)-2], body[len(body)-1] = '"', '}'
	for i := range n {
		req, err := http.NewRequest(http.MethodPost, "http://"+b.listen+"/hooks/"+name, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			req.Header.Set("Authorization", "Bearer not-"+hookSecret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unsigned request %d: %d; want 401", i, resp.StatusCode)
		}
	}
}

// stopBot ends the bot with SIGTERM and waits for it.
func stopBot(t *testing.T, p *botProc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// count returns the number of rows query finds in the bot's database.
func count(t *testing.T, dir, query string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "gatehouse.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestUnsignedFloodStoresNothingMemoryFlat is issue 31's "1,000 unsigned
// requests: 401 each, nothing stored, the process's memory flat", through
// the binary: after a warm-up, 1,000 requests of 256 KiB without a valid
// bearer are each answered 401; the bot's resident memory grows by less
// than 8 MiB (the bodies alone are 250 MiB), no model request is made, and
// nothing of them is in its database or its log.
func TestUnsignedFloodStoresNothingMemoryFlat(t *testing.T) {
	b := startWebhookBot(t, `  - name: deploys
    format: json
    secret: ${HOOK_TOKEN}
    conversation: slack:C0OPS
    prompt: A deploy changed state.
`)
	const size = 256 << 10
	unsigned(t, b, "deploys", 100, size) // warm-up: the server's buffers and the runtime's heap
	before := rss(t, b.p.cmd.Process.Pid)
	unsigned(t, b, "deploys", 1000, size)
	after := rss(t, b.p.cmd.Process.Pid)
	t.Logf("RSS before %d KiB, after %d KiB (growth %d KiB)", before>>10, after>>10, (after-before)>>10)
	if growth := after - before; growth > 8<<20 {
		t.Errorf("RSS grew by %d KiB over 1,000 unsigned requests; want under 8 MiB", growth>>10)
	}
	if n := len(b.model.Requests()); n != 0 {
		t.Errorf("model requests %d; want 0", n)
	}
	testutil.WaitFor(t, "the refusals counted", func() bool {
		return strings.Contains(metrics(t, b.listen), `outcome="unauthorized"} 1100`)
	})
	stopBot(t, b.p)
	if n := count(t, b.dir, `SELECT count(*) FROM webhook_deliveries`); n != 0 {
		t.Errorf("deliveries stored %d; want 0", n)
	}
	if n := count(t, b.dir, `SELECT count(*) FROM audit WHERE tool = 'webhook'`); n != 0 {
		t.Errorf("audit rows of deliveries %d; want 0", n)
	}
	if strings.Contains(b.p.stderr.String(), `"id":"flood"`) {
		t.Error("an unsigned body is in the log")
	}
}

// TestWebhooksReloadBySIGHUP: a webhook added by SIGHUP is served at
// once (404 before), and a webhook whose secret changed takes the new one
// only (the old gets 401), through the binary.
func TestWebhooksReloadBySIGHUP(t *testing.T) {
	const rotated = "rotated-secret-0123456789abcdef"
	b := startWebhookBot(t, `  - name: deploys
    format: json
    secret: ${HOOK_TOKEN}
    conversation: slack:C0OPS
    prompt: A deploy changed state.
`)
	if got := postHook(t, b, "builds", hookSecret, `{"id":"b1"}`); got != http.StatusNotFound {
		t.Fatalf("builds before the reload: %d; want 404", got)
	}
	if got := postHook(t, b, "deploys", hookSecret, `{"id":"d1"}`); got != http.StatusAccepted {
		t.Fatalf("deploys before the reload: %d; want 202", got)
	}
	next := strings.Replace(b.config, "    secret: ${HOOK_TOKEN}\n", "    secret: "+rotated+"\n", 1) + `  - name: builds
    format: json
    secret: ${HOOK_TOKEN}
    conversation: slack:C0BUILD
    prompt: A build changed state.
`
	writeFile(t, b.dir, "config.yaml", next)
	if err := b.p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the reload", func() bool { return strings.Contains(b.p.stderr.String(), "config reloaded") })
	if got := postHook(t, b, "builds", hookSecret, `{"id":"b1"}`); got != http.StatusAccepted {
		t.Errorf("builds after the reload: %d; want 202", got)
	}
	if got := postHook(t, b, "deploys", hookSecret, `{"id":"d2"}`); got != http.StatusUnauthorized {
		t.Errorf("deploys with the old secret after the reload: %d; want 401", got)
	}
	if got := postHook(t, b, "deploys", rotated, `{"id":"d3"}`); got != http.StatusAccepted {
		t.Errorf("deploys with the new secret: %d; want 202", got)
	}
	testutil.WaitFor(t, "the added webhook's turn answered in its conversation", func() bool {
		_, replies := b.threads("C0BUILD")
		return len(replies) == 1
	})
	stopBot(t, b.p)
}
