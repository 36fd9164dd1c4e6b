package webhooks

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// The formats a webhook takes.
const (
	FormatAlertmanager = "alertmanager"
	FormatGitHub       = "github"
	FormatJSON         = "json"
)

// Formats lists the formats, for errors and docs.
var Formats = []string{FormatAlertmanager, FormatGitHub, FormatJSON}

// DefaultMaxBytes bounds a delivery's body when max_bytes is unset.
const DefaultMaxBytes = 1 << 20

// DefaultRate is the verified deliveries a webhook takes when rate is unset.
var DefaultRate = Rate{N: 60, Per: time.Minute}

// Hook is one configured webhook.
type Hook struct {
	// Name is its path, /hooks/<Name>, and its identity, webhook:<Name>.
	Name   string
	Format string
	// Secret is the bearer or the HMAC key; never empty.
	Secret string
	// Conv is where its turns run: the incidents' threads open under it.
	Conv   core.Conversation
	Prompt string
	// Events are the statuses (alertmanager) or event names (github) that
	// start a turn; empty is all. Ignored for json.
	Events   []string
	MaxBytes int64
	Rate     Rate
}

// wants reports whether event starts a turn.
func (h *Hook) wants(event string) bool {
	return h.Format == FormatJSON || len(h.Events) == 0 || slices.Contains(h.Events, event)
}

// Rate is N deliveries per Per.
type Rate struct {
	N   int
	Per time.Duration
}

// String is the rate as configured, "30/m".
func (r Rate) String() string {
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	return strconv.Itoa(r.N) + "/" + unit
}

// ParseRate reads "N/s", "N/m" or "N/h" with N ≥ 1; "" is DefaultRate.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultRate, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[strings.TrimSpace(unit)]
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || per == 0 || err != nil || count < 1 || count > 1_000_000 {
		return Rate{}, fmt.Errorf("rate %q: want N/s, N/m or N/h with N from 1 to 1000000", s)
	}
	return Rate{N: count, Per: per}, nil
}

// CheckName refuses a name that cannot be a path segment and identity:
// 1 to 64 letters, digits, '_', '.' or '-'.
func CheckName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("want 1 to 64 letters, digits, '_', '.' or '-'")
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("%q: want letters, digits, '_', '.' or '-'", name)
		}
	}
	return nil
}

// CheckFormat refuses an unknown format.
func CheckFormat(f string) error {
	if !slices.Contains(Formats, f) {
		return fmt.Errorf("%q: want one of %s", f, strings.Join(Formats, ", "))
	}
	return nil
}
