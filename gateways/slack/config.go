package slack

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
	// ModeSocket receives over Socket Mode (a websocket the bot opens; no
	// public URL needed). It needs the app-level token.
	ModeSocket = "socket"
	// ModeEvents receives the Events API, interactivity and slash commands
	// as signed HTTP requests. It needs the signing secret.
	ModeEvents = "events"
)

// The channel behaviours.
const (
	// ChannelMention answers in a channel only when mentioned, or in a
	// thread the bot is part of.
	ChannelMention = "mention"
	// ChannelAll answers every channel message it receives.
	ChannelAll = "all"
)

// EventsPath is where the Events API handler is served: events,
// interactivity and slash commands all go to this one URL.
const EventsPath = "/slack/events"

// chunkLimit is the size replies are split to, in characters: far below
// the 40,000 at which Slack cuts a message's text, so that escaping
// (& → &amp;) can never push a chunk past it, and short enough to read.
const chunkLimit = 3500

// Config configures the gateway; zero fields take the defaults noted.
type Config struct {
	BotToken string // xoxb-…, required
	AppToken string // xapp-…, required in ModeSocket
	APIURL   string // default DefaultAPIURL; ends with a slash
	Mode     string // ModeSocket (default) or ModeEvents
	// SigningSecret verifies Events API requests; required in ModeEvents.
	SigningSecret string
	// Listen is the Events API server's host:port; empty when the caller
	// mounts EventsHandler on its own server.
	Listen  string
	Channel string // ChannelMention (default) or ChannelAll

	// HTTPClient makes the Web API requests; default a client without an
	// overall timeout (each request carries its own deadline) keeping as
	// many idle connections as Pace.Global allows requests a second.
	HTTPClient *http.Client
	// Pace limits posts and updates: default 1 a second per channel (Slack's
	// chat.postMessage limit) and 20 a second overall.
	Pace gateways.Limits
	// Backoff spaces retries; default 500ms up to 30s.
	Backoff gateways.Backoff
	// RetryFor bounds the retries of one request; default 5m.
	RetryFor time.Duration
	// SendTimeout bounds one Web API request; default 30s.
	SendTimeout time.Duration
	// PingInterval is how long Socket Mode waits for Slack's websocket
	// ping before it reconnects; default 30s.
	PingInterval time.Duration
	// MaxSkew is how old (or how far in the future) a signed Events API
	// request may be; default 5m.
	MaxSkew time.Duration
	// LookupTimeout bounds the conversations.replies call that asks
	// whether the bot is part of a thread it does not remember; default 5s.
	LookupTimeout time.Duration
	// Threads is how many threads the gateway remembers when it has no
	// Memory (the newest; default 4096).
	Threads int
	// FetchTimeout bounds one shared file's download; default 2m.
	FetchTimeout time.Duration
}

// Deps are the gateway's collaborators.
type Deps struct {
	Log zerolog.Logger
	// Approvals resolves button presses; nil answers presses with an error.
	Approvals gateways.Approvals
	// Metrics records delivery and reconnects; nil records nothing.
	Metrics *metrics.Registry
	// Memory keeps the threads the bot is part of across restarts; nil
	// keeps the newest Config.Threads of them in memory.
	Memory gateways.Memory
	// Auth is the allow list: a thread is remembered for a sender who
	// passes it, and only for such a sender is Slack asked whether the bot
	// is part of a thread it does not remember. nil treats every sender as
	// allowed (tests).
	Auth gateways.Admission
	// Shared, when set, paces sends with the other instances on the
	// store and writes replies to its outbox (gateways.OutboxConfig.Shared),
	// as "slack:<team>:<bot user>". Nil when the store is not shared.
	Shared *gateways.Shared
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	c.APIURL = orString(c.APIURL, DefaultAPIURL)
	c.Mode = orString(c.Mode, ModeSocket)
	c.Channel = orString(c.Channel, ChannelMention)
	switch {
	case c.BotToken == "":
		return c, errors.New("slack: bot_token is required")
	case c.Mode != ModeSocket && c.Mode != ModeEvents:
		return c, fmt.Errorf("slack: mode %q: want %s or %s", c.Mode, ModeSocket, ModeEvents)
	case c.Channel != ChannelMention && c.Channel != ChannelAll:
		return c, fmt.Errorf("slack: channel %q: want %s or %s", c.Channel, ChannelMention, ChannelAll)
	case c.Mode == ModeSocket && c.AppToken == "":
		return c, errors.New("slack: socket mode needs app_token (xapp-…)")
	case c.Mode == ModeEvents && c.SigningSecret == "":
		return c, errors.New("slack: events mode needs signing_secret")
	}
	if c.APIURL[len(c.APIURL)-1] != '/' {
		c.APIURL += "/"
	}
	c.RetryFor = orDuration(c.RetryFor, gateways.DefaultRetryFor)
	c.SendTimeout = orDuration(c.SendTimeout, 30*time.Second)
	c.PingInterval = orDuration(c.PingInterval, 30*time.Second)
	c.MaxSkew = orDuration(c.MaxSkew, 5*time.Minute)
	c.LookupTimeout = orDuration(c.LookupTimeout, 5*time.Second)
	if c.Threads <= 0 {
		c.Threads = 4096
	}
	c.FetchTimeout = orDuration(c.FetchTimeout, 2*time.Minute)
	if c.Pace == (gateways.Limits{}) {
		c.Pace = gateways.Limits{
			PerChat: gateways.Limit{N: 1, Per: time.Second},
			Global:  gateways.Limit{N: 20, Per: time.Second},
		}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: gateways.NewTransport(c.Pace.Global.N)}
	}
	if c.Backoff == (gateways.Backoff{}) {
		c.Backoff = gateways.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	return c, nil
}

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
