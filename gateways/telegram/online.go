package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// onlineTimeout bounds doctor's getMe.
const onlineTimeout = 10 * time.Second

var _ gateways.OnlineDoctor = (*Section)(nil)

// DoctorOnline asks the Bot API who the bot is (getMe) and reports the
// answer with its latency. The token appears in no line: errors are
// scrubbed of it and of its escaped forms.
func (s *Section) DoctorOnline(ctx context.Context, d gateways.Deps) gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Runs: true}
	}
	tok := s.Token.Value()
	set := secrets.New(tok, url.PathEscape(tok), url.QueryEscape(tok))
	client := d.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	ctx, cancel := context.WithTimeout(ctx, onlineTimeout)
	defer cancel()
	began := time.Now()
	name, err := getMe(ctx, client, strings.TrimRight(s.APIURL, "/")+"/bot"+tok+"/getMe")
	took := time.Since(began).Round(time.Millisecond)
	if err != nil {
		return gateways.Status{Lines: []string{fmt.Sprintf("%s: getMe failed after %s: %v", Name, took, gateways.ScrubError(set, err))}}
	}
	return gateways.Status{Runs: true, Lines: []string{fmt.Sprintf("%s: getMe ok in %s: @%s", Name, took, name)}}
}

// getMe makes the request and returns the bot's username.
func getMe(ctx context.Context, client *http.Client, u string) (string, error) {
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
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, textutil.Graphic(textutil.Shorten(r.Description, 200)))
	}
	return textutil.Graphic(textutil.Shorten(r.Result.Username, 64)), nil
}
