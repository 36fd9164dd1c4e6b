package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
)

// TestCheckpointsCollectAfterTheFirstReceive: the blob store's walk, which
// deletes blobs a crash left that no checkpoint names, is not part of the
// start-up (issue 34: it delayed the first poll); it runs once a gateway
// first receives.
func TestCheckpointsCollectAfterTheFirstReceive(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default(gatewaytable.Specs())
	cfg.Store.DSN = config.Secret(filepath.Join(dir, "gatehouse.db"))
	cfg.Tools.Workspace = filepath.Join(dir, "workspace")
	cfg.Tools.Checkpoints.Enabled = true
	st, err := storetable.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := storetable.Blobs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(blobs, strings.Repeat("0", 64))
	if err := os.MkdirAll(blobs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte("left by a crash"), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := buildCheckpoints(context.Background(), cfg, st, "test", nil, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("the build collected the blob store: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		a := &App{cfg: cfg, log: zerolog.Nop(), checkpoints: cp}
		recv := startup.NewReceiving()
		done := make(chan error, 1)
		go func() { done <- a.collectCheckpointsAfter(t.Context(), recv) }()
		synctest.Wait()
		if _, err := os.Stat(orphan); err != nil {
			t.Fatalf("collected before the first receive: %v", err)
		}
		recv.Open()
		if err := <-done; err != nil {
			t.Fatalf("collectCheckpointsAfter = %v", err)
		}
	})
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("the orphan blob is still there after the first receive (%v)", err)
	}
}
