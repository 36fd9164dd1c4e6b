package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

var _ gateways.OnlineDoctor = (*Section)(nil)

// DoctorOnline asks Discord who the bot is (GET /api/v9/users/@me) and
// reports the answer with its latency. The token appears in no line.
func (s *Section) DoctorOnline(ctx context.Context, d gateways.Deps) gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Runs: true}
	}
	tok := s.Token.Value()
	base := s.APIURL
	if base == "" {
		base = DefaultAPIURL
	}
	sec := secrets.New(tok)
	return gateways.Probe{
		Gateway: Name,
		Call:    "users/@me",
		Secrets: sec,
		Do: func(ctx context.Context, client *http.Client) (string, error) {
			return usersMe(ctx, client, strings.TrimRight(base, "/")+"/api/v9/users/@me", tok, sec)
		},
	}.Run(ctx, d.HTTPClient)
}

// usersMe makes the request and returns the bot's username. An error
// body is shown cut short, with sec's secrets removed before the cut: a
// token the cut splits would no longer be recognised.
func usersMe(ctx context.Context, client *http.Client, u, tok string, sec *secrets.Set) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Authorization", "Bot "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// The token is refused: say which key and variable hold it.
		return "", fmt.Errorf("%s: HTTP %d: %s", tokenKey, resp.StatusCode, textutil.Graphic(textutil.Shorten(sec.Redact(string(body)), 200)))
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, textutil.Graphic(textutil.Shorten(sec.Redact(string(body)), 200)))
	}
	var r struct {
		Username string `json:"username"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("HTTP %d, not a Discord answer", resp.StatusCode)
	}
	return textutil.Graphic(textutil.Shorten(r.Username, 64)), nil
}
