package webconsole_test

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestTwoInstancesShareTheConsole: on PostgreSQL, ann signs in through
// instance A; instance B, started afterwards, serves her session and
// shows the request A held; she approves it on B and on A at once, and
// the write runs once.
func TestTwoInstancesShareTheConsole(t *testing.T) {
	dsn := pgtest.DSN(t)
	_, ws, notes, tg, ai := fakes(t, "old line\n")
	addrA, addrB := freeAddr(t), freeAddr(t)
	storeOf := func(name string) string {
		return `{driver: postgres, dsn: "` + dsn + `", instance: ` + name + `, lease_ttl: 3s}`
	}
	cfg := startBot(t, botConfig(ai.URL(), tg, ws, storeOf("a"), addrA))

	ai.Push(fakeoai.ToolCalls(fakeoai.Call{Name: "write_file", Args: `{"path":"notes.txt","content":"new line\n"}`}), fakeoai.Text("notes updated"))
	req := waitSent(t, tg, say(tg, melID, melID, "update the notes"), melID, "/approve ")
	token := tokenRE.FindStringSubmatch(req)[1]
	from := say(tg, annID, annID, "/web")
	waitSent(t, tg, from, annID, "/web/signin?t=")
	link, _ := linkIn(tg, annID, from)
	if !strings.HasPrefix(link, "http://"+addrA+"/") {
		t.Fatalf("link %s; want instance A's", link)
	}
	onA := &client{t: t, origin: "http://" + addrA}
	csrf := onA.signIn(link)

	startBot(t, botConfig(ai.URL(), tg, ws, storeOf("b"), addrB))
	onB := &client{t: t, origin: "http://" + addrB, cookie: onA.cookie}
	if code, body := onB.do(http.MethodGet, "/web/", nil); code != http.StatusOK || !strings.Contains(body, token) || !strings.Contains(body, "+new line") {
		t.Fatalf("instance B's pending page = %d; want A's request %s with its diff:\n%s", code, token, body)
	}
	var wg sync.WaitGroup
	answers := make([]string, 2)
	for i, c := range []*client{onB, onA} {
		wg.Go(func() {
			_, answers[i] = c.do(http.MethodPost, "/web/r/"+token, url.Values{"csrf": {csrf}, "decision": {"approve"}})
		})
	}
	wg.Wait()
	running := 0
	for _, a := range answers {
		running += strings.Count(a, "approved — running")
	}
	if running != 1 || !strings.Contains(answers[0]+answers[1], "already approved") {
		t.Errorf("two approvals at once on A and B answered %q; want one run and one already approved", answers)
	}
	testutil.WaitFor(t, "the file written", func() bool {
		b, _ := os.ReadFile(notes)
		return string(b) == "new line\n"
	})
	waitSent(t, tg, 0, melID, "notes updated")
	checkAudit(t, cfg, token)
}
