package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

var _ gateways.OnlineDoctor = (*Section)(nil)

// DoctorOnline calls auth.test with the bot token and reports the answer
// with its latency. No token or secret appears in any line.
func (s *Section) DoctorOnline(ctx context.Context, d gateways.Deps) gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Runs: true}
	}
	base := s.APIURL
	if base == "" {
		base = DefaultAPIURL
	}
	return gateways.Probe{
		Gateway: Name,
		Call:    "auth.test",
		Secrets: secrets.New(s.BotToken.Value(), s.AppToken.Value(), s.SigningSecret.Value()),
		Do: func(ctx context.Context, client *http.Client) (string, error) {
			api := slack.New(s.BotToken.Value(), slack.OptionAPIURL(strings.TrimRight(base, "/")+"/"), slack.OptionHTTPClient(client))
			who, err := api.AuthTestContext(ctx)
			if refused(err) {
				// Say which key and variable hold the refused token.
				return "", fmt.Errorf("%s: %w", botTokenKey, err)
			}
			if err != nil {
				return "", err
			}
			return textutil.Graphic(textutil.Shorten(who.User, 64)), nil
		},
	}.Run(ctx, d.HTTPClient)
}

// refused reports whether err is Slack refusing the token itself (an
// error of auth.test's that a token fixes).
func refused(err error) bool {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return false
	}
	switch se.Err {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "not_allowed_token_type":
		return true
	}
	return false
}
