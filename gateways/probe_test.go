package gateways

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

func TestProbeReportsLatencyAndScrubsSecrets(t *testing.T) {
	const tok = "123456:secret-token-value"
	ok := Probe{Gateway: "demo", Call: "whoami", Secrets: secrets.New(tok),
		Do: func(ctx context.Context, _ *http.Client) (string, error) {
			if _, has := ctx.Deadline(); !has {
				return "", errors.New("no time limit on the probe")
			}
			return "@bot", nil
		}}.Run(context.Background(), nil)
	if !ok.Runs || len(ok.Lines) != 1 || !strings.HasPrefix(ok.Lines[0], "demo: whoami ok in ") || !strings.HasSuffix(ok.Lines[0], ": @bot") {
		t.Errorf("success: %+v", ok)
	}
	failed := Probe{Gateway: "demo", Call: "whoami", Secrets: secrets.New(tok),
		Do: func(context.Context, *http.Client) (string, error) {
			return "", errors.New("POST https://api.example/bot" + tok + "/getMe: connection refused")
		}}.Run(context.Background(), nil)
	if failed.Runs || len(failed.Lines) != 1 || !strings.HasPrefix(failed.Lines[0], "demo: whoami failed after ") {
		t.Errorf("failure: %+v", failed)
	}
	if strings.Contains(failed.Lines[0], tok) || !strings.Contains(failed.Lines[0], "connection refused") {
		t.Errorf("failure line leaks the token or lost the cause: %q", failed.Lines[0])
	}
}
