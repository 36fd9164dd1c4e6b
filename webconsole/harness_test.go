package webconsole

import (
	"context"
	"encoding/json"

	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

const (
	ann    = core.Identity("slack:UANN") // an approver
	bob    = core.Identity("slack:UBOB") // an approver of the "ops" profile only
	member = core.Identity("slack:UMEM") // no approver
	origin = "http://127.0.0.1:9090"
)

// fakeApprovals is a broker with fixed approvals and rules: ann approves
// everything, bob only requests of conversations under slack:COPS.
type fakeApprovals struct {
	mu        sync.Mutex
	pending   []record.Approval
	decisions []string // "who token decision reason"
}

func (f *fakeApprovals) Pending(context.Context) ([]record.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]record.Approval(nil), f.pending...), nil
}

func (f *fakeApprovals) MaySignIn(id core.Identity) bool { return id == ann || id == bob }

func (f *fakeApprovals) Approves(id core.Identity, conv string) bool {
	return id == ann || (id == bob && strings.HasPrefix(conv, "slack:COPS"))
}

func (f *fakeApprovals) MayResolve(id core.Identity, a record.Approval) bool {
	return id == ann || (id == bob && a.Conv.Chat == "COPS")
}

func (f *fakeApprovals) OwnRequest(id core.Identity, a record.Approval) bool {
	return a.RequestedBy == id
}

func (f *fakeApprovals) Profile(conv core.Conversation) string {
	if conv.Chat == "COPS" {
		return "ops"
	}
	return ""
}

func (f *fakeApprovals) Change(a record.Approval) (Change, bool) {
	if a.Call.Name != "write_file" {
		return Change{}, false
	}
	return Change{Path: "notes.txt", Added: 1, Deleted: 1, Text: "@@ -1 +1 @@\n-old <b>line</b>\n+new line\n"}, true
}

func (f *fakeApprovals) Decide(_ context.Context, from core.Identity, token string, d core.ApprovalDecision, reason string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decisions = append(f.decisions, strings.Join([]string{string(from), token, string(rune('0' + d)), reason}, " "))
	return "approved — running…"
}

func (f *fakeApprovals) decided() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.decisions...)
}

// fakeChat records replies; identities in noDM have no direct conversation.
type fakeChat struct {
	mu   sync.Mutex
	sent []core.Action
	noDM map[core.Identity]bool
}

func (f *fakeChat) Act(_ context.Context, a core.Action) (core.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, a)
	return core.Result{}, nil
}

func (f *fakeChat) DirectConversation(_ context.Context, id core.Identity) (core.Conversation, error) {
	if f.noDM[id] {
		return core.Conversation{}, core.ErrNoDirect
	}
	return core.Conversation{Gateway: id.Gateway(), Chat: "D" + string(id[len(id.Gateway())+1:])}, nil
}

func (f *fakeChat) replies() []core.Action {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]core.Action(nil), f.sent...)
}

// harness is a Console on a temporary SQLite store.
type harness struct {
	t     *testing.T
	c     *Console
	store *sqlite.DB
	appr  *fakeApprovals
	chat  *fakeChat
	now   time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gatehouse.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Now()
	h := &harness{t: t, store: db, chat: &fakeChat{noDM: map[core.Identity]bool{}}, now: now,
		appr: &fakeApprovals{pending: []record.Approval{
			{Token: "K7Q2MX9P", Conv: core.Conversation{Gateway: "slack", Chat: "CDEV"}, RequestedBy: member,
				Call: llm.ToolCall{Name: "write_file", Args: `{"path":"notes.txt","content":"new line\n"}`},
				Rule: "write_file", Created: now.Add(-time.Minute), Expires: now.Add(14 * time.Minute), Status: record.StatusPending},
			{Token: "OPSAAAAA", Conv: core.Conversation{Gateway: "slack", Chat: "COPS"}, RequestedBy: member,
				Call: llm.ToolCall{Name: "shell", Args: `{"command":"echo <script>alert(1)</script>"}`},
				Rule: "shell", Created: now.Add(-2 * time.Minute), Expires: now.Add(13 * time.Minute), Status: record.StatusPending},
		}}}
	c, err := New(Options{Store: db, Audit: db, Approvals: h.appr, Chat: h.chat, PublicURL: origin,
		WriteJSON: func(w io.Writer, entries []record.AuditEntry) error { return json.NewEncoder(w).Encode(entries) },
		Session:   time.Hour, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	return h
}

// linkRE finds a sign-in link in a reply.
var linkRE = regexp.MustCompile(`http://\S+/web/signin\?t=[0-9a-f]{64}`)

// link asks for a sign-in link as id and returns it.
func (h *harness) link(id core.Identity) string {
	h.t.Helper()
	n := len(h.chat.replies())
	if !h.c.HandleCommand(context.Background(), core.Signal{Kind: core.KindMessage, From: id, Text: "/web",
		Conv: core.Conversation{Gateway: "slack", Chat: "CDEV"}}) {
		h.t.Fatal("/web was not handled")
	}
	for _, a := range h.chat.replies()[n:] {
		if l := linkRE.FindString(a.Text); l != "" {
			return l
		}
	}
	h.t.Fatalf("no sign-in link in %+v", h.chat.replies()[n:])
	return ""
}

// do serves one request and returns the response and its body.
func (h *harness) do(r *http.Request) (*http.Response, string) {
	h.t.Helper()
	w := httptest.NewRecorder()
	h.c.ServeHTTP(w, r)
	res := w.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// post is a same-origin form POST as a browser sends it.
func post(path string, form url.Values, cookie *http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodPost, origin+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("Origin", origin)
	if cookie != nil {
		r.AddCookie(cookie)
	}
	return r
}

// get is a same-origin GET.
func get(path string, cookie *http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, origin+path, nil)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	if cookie != nil {
		r.AddCookie(cookie)
	}
	return r
}

// signIn uses a fresh link of id and returns the session cookie.
func (h *harness) signIn(id core.Identity) *http.Cookie {
	h.t.Helper()
	u, err := url.Parse(h.link(id))
	if err != nil {
		h.t.Fatal(err)
	}
	res, body := h.do(post("/web/signin", url.Values{"t": {u.Query().Get("t")}}, nil))
	if res.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign-in POST = %d %s; want 303", res.StatusCode, body)
	}
	for _, c := range res.Cookies() {
		if c.Name == h.c.cookieName() {
			return c
		}
	}
	h.t.Fatalf("sign-in set no session cookie: %v", res.Header["Set-Cookie"])
	return nil
}

// csrfOf reads the CSRF token of the page body.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}
