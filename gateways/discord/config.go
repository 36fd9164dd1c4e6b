package discord

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// The guild channel behaviours.
const (
	// GuildMention passes guild messages only when they mention the bot,
	// reply to it, or are commands.
	GuildMention = "mention"
	// GuildAll passes every guild message.
	GuildAll = "all"
)

// DefaultAPIURL is Discord's REST base.
const DefaultAPIURL = "https://discord.com"

// Config configures the gateway; zero fields take the defaults noted.
type Config struct {
	Token      string
	APIURL     string // default DefaultAPIURL
	GatewayURL string // default: asked of GET /api/v9/gateway
	Guild      string // GuildMention (default) or GuildAll
	// GuildID registers the slash commands in that guild; empty: globally.
	GuildID string

	// HTTPClient's transport makes the requests (api_url is applied on top
	// of it); default gateways.NewTransport keeping as many idle
	// connections as Pace.Global allows requests a second.
	HTTPClient *http.Client
	// Pace limits sends and edits; default Discord's 50 requests a second
	// overall and 5 in 5 s per channel.
	Pace gateways.Limits
	// Backoff spaces retries; default 500ms up to 30s.
	Backoff gateways.Backoff
	// RetryFor is how long one request keeps being retried after its
	// first failure; default gateways.DefaultRetryFor.
	RetryFor time.Duration
	// SendTimeout bounds one REST request; default 30s.
	SendTimeout time.Duration
	// TypingEvery is how often the typing indicator is renewed (Discord
	// shows it for 10 s); default 8s.
	TypingEvery time.Duration
	// OpenBackoff spaces the attempts to open the websocket when it cannot
	// be opened at start; default 1s up to 1m.
	OpenBackoff gateways.Backoff
	// FetchTimeout bounds one attachment's download; default 2m.
	FetchTimeout time.Duration
}

// Deps are the gateway's collaborators.
type Deps struct {
	Log zerolog.Logger
	// Approvals resolves button presses; nil answers presses with an error.
	Approvals gateways.Approvals
	// Metrics records delivery and reconnects; nil records nothing.
	Metrics *metrics.Registry
	// Lease, when set, opens the websocket session only while this
	// instance holds the lease "discord:<bot id>" (gateways.RunUnderLease):
	// Discord delivers each event to every session of a token, so
	// instances sharing a store run one session per token. Nil: always.
	Lease *gateways.LeaseConfig
	// Shared, when set, paces sends with the other instances on the
	// store and writes replies to its outbox (gateways.OutboxConfig.Shared),
	// as "discord:<bot user id>". Nil when the store is not shared.
	Shared *gateways.Shared
	// Memory remembers the threads the bot started (an incident's), where
	// a guild message needs no mention; nil keeps them in memory.
	Memory gateways.Memory
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Token == "" {
		return c, errors.New("discord: token is required")
	}
	c.APIURL = orString(c.APIURL, DefaultAPIURL)
	c.Guild = orString(c.Guild, GuildMention)
	if c.Guild != GuildMention && c.Guild != GuildAll {
		return c, fmt.Errorf("discord: guild %q: want %s or %s", c.Guild, GuildMention, GuildAll)
	}
	if c.Pace == (gateways.Limits{}) {
		c.Pace = gateways.Limits{
			Global:  gateways.Limit{N: 50, Per: time.Second},
			PerChat: gateways.Limit{N: 5, Per: 5 * time.Second},
		}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: gateways.NewTransport(c.Pace.Global.N)}
	}
	if c.Backoff == (gateways.Backoff{}) {
		c.Backoff = gateways.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	if c.OpenBackoff == (gateways.Backoff{}) {
		c.OpenBackoff = gateways.Backoff{Min: time.Second, Max: time.Minute}
	}
	c.RetryFor = orDuration(c.RetryFor, gateways.DefaultRetryFor)
	c.SendTimeout = orDuration(c.SendTimeout, 30*time.Second)
	c.TypingEvery = orDuration(c.TypingEvery, 8*time.Second)
	c.FetchTimeout = orDuration(c.FetchTimeout, 2*time.Minute)
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
