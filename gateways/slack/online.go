package slack

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// onlineTimeout bounds doctor's auth.test.
const onlineTimeout = 10 * time.Second

var _ gateways.OnlineDoctor = (*Section)(nil)

// DoctorOnline calls auth.test with the bot token and reports the answer
// with its latency. No token or secret appears in any line.
func (s *Section) DoctorOnline(ctx context.Context, d gateways.Deps) gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Runs: true}
	}
	set := secrets.New(s.BotToken.Value(), s.AppToken.Value(), s.SigningSecret.Value())
	client := d.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	base := s.APIURL
	if base == "" {
		base = DefaultAPIURL
	}
	api := slack.New(s.BotToken.Value(), slack.OptionAPIURL(strings.TrimRight(base, "/")+"/"), slack.OptionHTTPClient(client))
	ctx, cancel := context.WithTimeout(ctx, onlineTimeout)
	defer cancel()
	began := time.Now()
	who, err := api.AuthTestContext(ctx)
	took := time.Since(began).Round(time.Millisecond)
	if err != nil {
		return gateways.Status{Lines: []string{fmt.Sprintf("%s: auth.test failed after %s: %v", Name, took, gateways.ScrubError(set, err))}}
	}
	return gateways.Status{Runs: true, Lines: []string{fmt.Sprintf("%s: auth.test ok in %s: %s", Name, took, textutil.Graphic(textutil.Shorten(who.User, 64)))}}
}
