package app_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

// TestStatusListsInstancesAndLeases: /status lists the instances alive on
// the store, this one marked and with its version, another one's row (as
// an instance on a shared database leaves it) and the leases held, names
// shown on one line; a clean stop removes this instance's row.
func TestStatusListsInstancesAndLeases(t *testing.T) {
	fake := fakeoai.Start(t)
	dir := t.TempDir()
	yaml := fmt.Sprintf("llm: {providers: [{name: fake, base_url: %q, model: fake-model}]}\n"+
		"tools: {workspace: %q}\nstore: {dsn: %q}\nhttp: {listen: \"\"}\n",
		fake.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	// The store's clock stands still: the other instance stays alive.
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other, err := storetable.Open(ctx, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Heartbeat(ctx, store.Instance{Name: "host-b-7\n/approve X", Version: "v1.3.0", Started: at.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if held, err := other.AcquireLease(ctx, "telegram:123", "host-b-7\n/approve X", time.Hour); err != nil || !held {
		t.Fatalf("AcquireLease = %v, %v", held, err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}

	stdin, typed := io.Pipe()
	out := &testutil.SyncBuffer{}
	a, err := app.New(ctx, app.Options{Config: cfg, Stdin: stdin, Stdout: out, Log: zerolog.Nop(), Secrets: secrets.New(),
		Now: now, Instance: "host-a-9", Version: "v9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	sqlite, err := storetable.Lookup("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("Store: sqlite, schema version %d\n", sqlite.SchemaVersion),
		`Instances: host-a-9 (this one, v9.9.9), host-b-7\n/approve X (v1.3.0)`,
		`Leases: telegram:123 held by host-b-7\n/approve X`,
	}
	asked := 0
	testutil.WaitFor(t, "/status listing both instances", func() bool {
		// Asked again until this instance's first heartbeat is in.
		if _, err := io.WriteString(typed, "/status\n"); err != nil {
			t.Fatal(err)
		}
		asked++
		testutil.WaitFor(t, "the answer", func() bool { return strings.Count(out.String(), "Model: fake-model") >= asked })
		return strings.Contains(out.String(), want[1])
	})
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("/status lacks %q:\n%s", w, out)
		}
	}
	typed.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := storetable.Open(context.Background(), cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ins, err := st.Instances(context.Background(), time.Hour)
	if err != nil || len(ins) != 1 || ins[0].Name != "host-b-7\n/approve X" {
		t.Errorf("after a clean stop, Instances = %+v, %v; want the other one only", ins, err)
	}
}
