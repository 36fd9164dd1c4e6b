package webconsole

import (
	"context"
	_ "embed" // the stylesheet
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Pattern is where the console is mounted on http.listen.
const Pattern = "/web/"

// Gateway names the console where a decision's audit entries say where
// it came from ("via web").
const Gateway = "web"

// Store keeps the sign-in links and sessions (store.WebSessions).
type Store interface {
	AddWebLink(ctx context.Context, l record.WebLink) error
	UseWebLink(ctx context.Context, hash string) (record.WebLink, error)
	AddWebSession(ctx context.Context, s record.WebSession) error
	WebSession(ctx context.Context, hash string) (record.WebSession, error)
	EndWebSession(ctx context.Context, hash string) error
	EndWebSessions(ctx context.Context, id core.Identity) (int, error)
}

// Audit is the audit log: sign-ins and sign-outs are appended, the audit
// page queries it.
type Audit interface {
	AppendAudit(ctx context.Context, e record.AuditEntry) error
	QueryAudit(ctx context.Context, f record.AuditFilter) ([]record.AuditEntry, error)
}

// Change is what a held write_file call would do to its file (the
// broker's preview): Text is the unified diff's hunks, or the new
// content of a new file or of one too large to diff.
type Change struct {
	Path           string
	New            bool
	TooLarge       bool
	Added, Deleted int
	Text           string
}

// Approvals is the approval broker as the console uses it (hitl.Broker,
// through app).
type Approvals interface {
	// Pending lists the pending approvals of every instance.
	Pending(ctx context.Context) ([]record.Approval, error)
	// MaySignIn reports whether id approves anything (hitl.approvers,
	// a profile's approvers, an escalation step's).
	MaySignIn(id core.Identity) bool
	// Approves reports whether id approves the conversation conv (a
	// key): hitl.approvers approve every one; a profile's approvers its
	// conversations'. The audit shows id only those entries.
	Approves(id core.Identity, conv string) bool
	// MayResolve reports whether id may approve or deny a.
	MayResolve(id core.Identity, a record.Approval) bool
	// OwnRequest reports whether a is id's person's own request, which
	// they may deny but not approve (four-eyes).
	OwnRequest(id core.Identity, a record.Approval) bool
	// Profile names the profile of conv ("" for none).
	Profile(conv core.Conversation) string
	// Change is the preview of a held write_file call.
	Change(a record.Approval) (Change, bool)
	// Decide resolves token for from as a button press does (a deny
	// with reason), and returns the short outcome.
	Decide(ctx context.Context, from core.Identity, token string, d core.ApprovalDecision, reason string) string
}

// Chat sends the sign-in links (core.Engine).
type Chat interface {
	Act(ctx context.Context, a core.Action) (core.Result, error)
	DirectConversation(ctx context.Context, id core.Identity) (core.Conversation, error)
}

// Options configure a Console.
type Options struct {
	Store     Store
	Audit     Audit
	Approvals Approvals
	Chat      Chat
	// WriteJSON writes audit entries as `bot audit -json` does.
	WriteJSON func(w io.Writer, entries []record.AuditEntry) error
	// Views, when set, serves the conversations and cluster pages.
	Views Views
	// PublicURL is how browsers reach the console, scheme://host[:port]
	// (http.public_url, else http://<http.listen>).
	PublicURL string
	// Session is how long a session lasts (http.console_session).
	Session time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log zerolog.Logger
}

// Console serves the web console and answers /web in chat.
type Console struct {
	o      Options
	origin string // scheme://host[:port] of PublicURL
	secure bool   // PublicURL is https: cookies are Secure and __Host-
	mux    *http.ServeMux
}

// styleCSS is the one stylesheet.
//
//go:embed assets/style.css
var styleCSS []byte

// New makes a Console; publicURL must be an absolute http(s) URL.
func New(o Options) (*Console, error) {
	u, err := url.Parse(o.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &url.Error{Op: "webconsole: public URL", URL: o.PublicURL, Err: errBadURL}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Console{o: o, origin: u.Scheme + "://" + u.Host, secure: u.Scheme == "https"}
	c.mux = c.routes()
	return c, nil
}
