package telegram

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// The receiving modes.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// The group behaviours.
const (
	// GroupMention passes group messages only when they mention the bot,
	// reply to it, or are commands.
	GroupMention = "mention"
	// GroupAll passes every group message.
	GroupAll = "all"
)

// DefaultAPIURL is Telegram's Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// DefaultRetryFor is how long a request is retried on transient errors when
// Config.RetryFor is zero.
const DefaultRetryFor = 5 * time.Minute

// Config configures the gateway; zero fields take the defaults noted.
type Config struct {
	Token   string
	APIURL  string // default DefaultAPIURL
	Mode    string // ModePolling (default) or ModeWebhook
	Webhook Webhook
	Group   string // GroupMention (default) or GroupAll

	// PollTimeout is the long-poll timeout, sent in whole seconds; default 30s.
	PollTimeout time.Duration
	// StallMargin is how long past PollTimeout a poll may hang before the
	// watchdog abandons it and polls again; default 15s.
	StallMargin time.Duration
	// RepollEvery is how often getUpdates is asked again while Telegram
	// holds only updates still in progress (kept unconfirmed so that a
	// crash loses none; Telegram then answers at once instead of waiting);
	// default 1s. New messages wait at most this long meanwhile.
	RepollEvery time.Duration
	// PollFloor is the least time from one long poll's start to the
	// next's when the first was answered with nothing: an endpoint that
	// answers getUpdates at once whatever its timeout (a proxy, a
	// misbehaving self-hosted server, an emulator) is then polled once
	// a PollFloor, not thousands of times a second. It does not hold back
	// the short poll after start or after a failure. Default 1s.
	PollFloor time.Duration
	// HTTPClient makes the requests; default a client without an overall
	// timeout (each request carries its own deadline) that keeps
	// MaxIdleConns connections to the API open between requests.
	HTTPClient *http.Client
	// Pace limits sends and edits; default 1 a second per chat and 30 a
	// second overall, in any one-second window.
	Pace gateways.Limits
	// Backoff spaces retries; default 500ms up to 30s.
	Backoff gateways.Backoff
	// RetryFor is how long one request keeps being retried after its
	// first failure (5xx and transport errors with Backoff, 429s after the
	// pause Telegram asks for) before it is given up; default 5m, so a
	// reply rides out a short outage.
	RetryFor time.Duration
	// RetryAfterUnit is the length of one unit of a 429's retry_after;
	// default 1s (tests shorten it).
	RetryAfterUnit time.Duration
	// SendTimeout bounds one request other than getUpdates; default 30s.
	SendTimeout time.Duration
	// TypingEvery is how often the typing indicator is renewed; default 4s.
	TypingEvery time.Duration
	// MaxFileBytes is attachments.max_bytes: the photo size taken is the
	// largest within it; default 20MiB.
	MaxFileBytes int64
	// FetchTimeout bounds one attachment's getFile and download; default 2m.
	FetchTimeout time.Duration
}

// Webhook configures webhook mode.
type Webhook struct {
	// Listen is the address the gateway serves updates on; empty when the
	// caller mounts WebhookHandler on its own server.
	Listen string
	// PublicURL is the URL Telegram posts updates to (given to setWebhook).
	PublicURL string
	// SecretToken must arrive in X-Telegram-Bot-Api-Secret-Token.
	SecretToken string
}

// Deps are the gateway's collaborators.
type Deps struct {
	Log zerolog.Logger
	// Cursors persists the update offset; nil keeps it in memory.
	Cursors gateways.Cursors
	// Parking keeps the updates confirmed past maxHeld while in progress,
	// until done; nil keeps them in memory.
	Parking gateways.Parking
	// Approvals resolves button presses; nil answers presses with an error.
	Approvals gateways.Approvals
	// Metrics records delivery and reconnects; nil records nothing.
	Metrics *metrics.Registry
	// Lease, when set, runs long polling only while this instance holds the
	// lease "telegram:<bot id>" (gateways.RunUnderLease): Telegram allows
	// one getUpdates per token at a time. Nil when the store is not shared.
	Lease *gateways.LeaseConfig
	// Shared, when set, paces sends with the other instances on the
	// store and writes replies to its outbox (gateways.OutboxConfig.Shared),
	// as "telegram:<bot id>". Nil when the store is not shared.
	Shared *gateways.Shared

	connecting *connecting // a getMe under way (Section.Prepare); nil: New asks it
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Token == "" {
		return c, errors.New("telegram: token is required")
	}
	c.APIURL = orString(c.APIURL, DefaultAPIURL)
	c.Mode = orString(c.Mode, ModePolling)
	c.Group = orString(c.Group, GroupMention)
	if c.Mode != ModePolling && c.Mode != ModeWebhook {
		return c, fmt.Errorf("telegram: mode %q: want %s or %s", c.Mode, ModePolling, ModeWebhook)
	}
	if c.Group != GroupMention && c.Group != GroupAll {
		return c, fmt.Errorf("telegram: group %q: want %s or %s", c.Group, GroupMention, GroupAll)
	}
	if c.Mode == ModeWebhook && (c.Webhook.PublicURL == "" || c.Webhook.SecretToken == "") {
		return c, errors.New("telegram: webhook mode needs webhook public_url and secret_token")
	}
	c.PollTimeout = orDuration(c.PollTimeout, 30*time.Second)
	c.StallMargin = orDuration(c.StallMargin, 15*time.Second)
	c.RepollEvery = orDuration(c.RepollEvery, time.Second)
	c.PollFloor = orDuration(c.PollFloor, time.Second)
	c.RetryAfterUnit = orDuration(c.RetryAfterUnit, time.Second)
	c.SendTimeout = orDuration(c.SendTimeout, 30*time.Second)
	c.TypingEvery = orDuration(c.TypingEvery, 4*time.Second)
	c.RetryFor = orDuration(c.RetryFor, DefaultRetryFor)
	c.FetchTimeout = orDuration(c.FetchTimeout, 2*time.Minute)
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 20 << 20
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: newTransport()}
	}
	if c.Pace == (gateways.Limits{}) {
		c.Pace = gateways.Limits{
			PerChat: gateways.Limit{N: 1, Per: time.Second},
			Global:  gateways.Limit{N: 30, Per: time.Second},
		}
	}
	if c.Backoff == (gateways.Backoff{}) {
		c.Backoff = gateways.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	return c, nil
}

// MaxIdleConns is how many idle connections to the Bot API the default
// client keeps for reuse: the global pace (30 sends a second) plus the
// long poll, so a burst of sends to many chats does not dial a new
// connection for most of them, as the standard library's default of 2
// made it do (the bench's CPU profile showed the dialling).
const MaxIdleConns = 32

// newTransport is gateways.NewTransport keeping MaxIdleConns idle
// connections per host.
func newTransport() *http.Transport { return gateways.NewTransport(MaxIdleConns) }

func orString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func orDuration(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}
