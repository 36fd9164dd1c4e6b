package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

var _ gateways.OnlineDoctor = (*Section)(nil)

// DoctorOnline asks the Bot API who the bot is (getMe) and reports the
// answer with its latency. The token appears in no line: errors are
// scrubbed of it and of its escaped forms.
func (s *Section) DoctorOnline(ctx context.Context, d gateways.Deps) gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Runs: true}
	}
	tok := s.Token.Value()
	sec := secrets.New(tok, url.PathEscape(tok), url.QueryEscape(tok))
	return gateways.Probe{
		Gateway: Name,
		Call:    "getMe",
		Secrets: sec,
		Do: func(ctx context.Context, client *http.Client) (string, error) {
			name, err := getMe(ctx, client, strings.TrimRight(s.APIURL, "/")+"/bot"+tok+"/getMe", sec)
			return "@" + name, err
		},
	}.Run(ctx, d.HTTPClient)
}

// getMe makes the request and returns the bot's username. An error's
// description is shown cut short, with sec's secrets removed before the
// cut: a token the cut splits would no longer be recognised.
func getMe(ctx context.Context, client *http.Client, u string, sec *secrets.Set) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return "", fmt.Errorf("request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	var r struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("HTTP %d, not a Bot API answer", resp.StatusCode)
	}
	if !r.OK {
		desc := textutil.Graphic(textutil.Shorten(sec.Redact(r.Description), 200))
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			// The token is refused: say which key and variable hold it.
			return "", fmt.Errorf("%s: %s (HTTP %d)", tokenKey, desc, resp.StatusCode)
		}
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, desc)
	}
	return textutil.Graphic(textutil.Shorten(r.Result.Username, 64)), nil
}
