package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/app"
	"github.com/gatehouse-bot/gatehouse/internal/config"
	"github.com/gatehouse-bot/gatehouse/internal/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestBrokenStdinClosesOnlyTheConsole: with another gateway running, a
// console whose stdin cannot be read (nohup gives a write-only /dev/null)
// is closed, and the bot keeps serving the other gateway.
func TestBrokenStdinClosesOnlyTheConsole(t *testing.T) {
	dir := t.TempDir()
	yaml := fmt.Sprintf("tools: {workspace: %q}\nstore: {dsn: %q}\nhttp: {listen: \"\"}\n",
		filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	other := &benchGateway{inbox: make(chan gateways.Inbox, 1), replies: make(chan string, 1)}
	logs := &testutil.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{Config: cfg, Stdin: stdin, Stdout: &testutil.SyncBuffer{}, Log: zerolog.New(logs),
		Secrets: secrets.New(), Gateways: []gateways.Gateway{other}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	<-other.inbox
	testutil.WaitFor(t, "the console failure in the log", func() bool {
		select {
		case err := <-done:
			t.Fatalf("the bot stopped with the console: %v", err)
		default:
		}
		return containsLog(logs, "console input failed")
	})
	select {
	case err := <-done:
		t.Fatalf("the bot stopped with the console: %v", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func containsLog(b *testutil.SyncBuffer, s string) bool { return strings.Contains(b.String(), s) }
