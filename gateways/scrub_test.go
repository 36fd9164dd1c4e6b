package gateways_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

func TestScrubError(t *testing.T) {
	const token = "123456:TEST-scrub-token-abcdef"
	set := secrets.New(token)
	raw := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/bot" + token + "/getMe", Err: context.DeadlineExceeded}
	err := gateways.ScrubError(set, fmt.Errorf("wrapped: %w", raw))
	if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "/bot[REDACTED]/getMe") {
		t.Fatalf("scrubbed: %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the cause is lost")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		t.Fatal("the original error, with the token, is still reachable")
	}
	clean := errors.New("no secret here")
	if gateways.ScrubError(set, clean) != clean || gateways.ScrubError(set, nil) != nil {
		t.Fatal("clean errors must pass unchanged")
	}
	// A cause that itself holds the token is not kept.
	leaky := &url.Error{Op: "Get", URL: "x", Err: errors.New("dial " + token)}
	if err := gateways.ScrubError(set, leaky); errors.Unwrap(err) != nil || strings.Contains(err.Error(), token) {
		t.Fatalf("a cause holding the token is reachable: %v", err)
	}
}
