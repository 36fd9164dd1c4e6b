package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
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

// startWithOther runs an App whose console reads stdin, with another gateway
// (posing as telegram, open to everybody) besides it, and returns Run's
// result channel, the other gateway, its inbox, the console's output and a
// cancel for the App's context.
func startWithOther(t *testing.T, stdin *os.File, interactive bool) (<-chan error, *benchGateway, gateways.Inbox, *testutil.SyncBuffer, context.CancelFunc) {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf("gateways: {telegram: {allow: [\"*\"]}}\ntools: {workspace: %q}\nstore: {dsn: %q}\nhttp: {listen: \"\"}\n",
		filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	other := &benchGateway{inbox: make(chan gateways.Inbox, 1), replies: make(chan string, 1)}
	out := &testutil.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Stdin: stdin, Stdout: out, Interactive: interactive,
		Log: zerolog.Nop(), Secrets: secrets.New(), Gateways: []gateways.Gateway{other}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)    // Run's result, for the test
	stopped := make(chan struct{}) // closed when Run has returned
	go func() {
		defer close(stopped)
		done <- a.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
		a.Close()
	})
	return done, other, <-other.inbox, out, cancel
}

// TestCtrlDOnTerminalQuits: on a terminal (Interactive), the end of the
// console's input (Ctrl-D) ends the bot although another gateway runs, as
// the console's banner promises.
func TestCtrlDOnTerminalQuits(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done, _, _, _, _ := startWithOther(t, r, true)
	w.Close() // Ctrl-D
	var runErr error
	testutil.WaitFor(t, "Run to end after Ctrl-D", func() bool {
		select {
		case runErr = <-done:
			return true
		default:
			return false
		}
	})
	if runErr != nil {
		t.Fatalf("Run after Ctrl-D = %v; want nil", runErr)
	}
}

// TestPipedEOFEndsOnlyTheConsole: piped input ending, with another gateway
// running, ends the console alone; the other gateway is still answered and
// the bot stops only when told.
func TestPipedEOFEndsOnlyTheConsole(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("what time is it\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done, other, inbox, out, cancel := startWithOther(t, r, false)
	testutil.WaitFor(t, "the console's answer", func() bool { return strings.Contains(out.String(), "The time is") })
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: "1"},
		From: "telegram:1", Text: "what time is it"}
	if err := inbox.Submit(context.Background(), s); err != nil {
		t.Fatalf("Submit after the console's input ended: %v", err)
	}
	if got := <-other.replies; !strings.Contains(got, "The time is") {
		t.Errorf("the other gateway got %q; want the time", got)
	}
	select {
	case err := <-done:
		t.Fatalf("Run ended with the console's input: %v", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
