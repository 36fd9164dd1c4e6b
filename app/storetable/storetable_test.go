package storetable_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/app/storetable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// configAt returns the default configuration with store.dsn at path.
func configAt(path string) *config.Config {
	cfg := config.Default(gatewaytable.Specs())
	cfg.Store.DSN = config.Secret(path)
	return cfg
}

func TestTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range storetable.Drivers() {
		if d.Name == "" || seen[d.Name] {
			t.Errorf("driver name %q empty or listed twice", d.Name)
		}
		seen[d.Name] = true
		if d.Open == nil || d.OpenReadOnly == nil || d.Where == nil || d.Creatable == nil || d.Check == nil ||
			d.Blobs == nil || d.SchemaVersion <= 0 {
			t.Errorf("driver %s: a function is missing or the schema version is %d", d.Name, d.SchemaVersion)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"", "sqlite"} {
		if d, err := storetable.Lookup(name); err != nil || d.Name != "sqlite" {
			t.Errorf("Lookup(%q) = %s, %v; want sqlite", name, d.Name, err)
		}
	}
	if d, err := storetable.Lookup("postgres"); err != nil || d.Name != "postgres" {
		t.Errorf("Lookup(postgres) = %s, %v; want postgres", d.Name, err)
	}
	_, err := storetable.Lookup("mysql")
	if err == nil || !strings.Contains(err.Error(), `store.driver: "mysql" is not supported`) ||
		!strings.Contains(err.Error(), `"sqlite"`) || !strings.Contains(err.Error(), `"postgres"`) {
		t.Errorf("Lookup(mysql) = %v; want not supported, naming sqlite and postgres", err)
	}
	cfg := configAt(filepath.Join(t.TempDir(), "x.db"))
	cfg.Store.Driver = "mysql"
	if _, err := storetable.OpenReadOnly(context.Background(), cfg); err == nil {
		t.Error("OpenReadOnly with an unknown driver succeeded")
	}
}

// TestReadOnlyOpen: a store that does not exist yet is ErrNotCreated and is
// not created; an existing one opens for reading while the bot holds it,
// and refuses writes.
func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	cfg := configAt(path)
	if _, err := storetable.OpenReadOnly(ctx, cfg); !errors.Is(err, store.ErrNotCreated) {
		t.Fatalf("OpenReadOnly of a missing store = %v; want ErrNotCreated", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenReadOnly created %s: %v", path, err)
	}
	d, _ := storetable.Lookup(cfg.Store.Driver)
	if err := d.Creatable(cfg); err != nil {
		t.Errorf("Creatable in a temporary directory = %v", err)
	}
	if got := d.Where(cfg); got != path {
		t.Errorf("Where = %q, want %q", got, path)
	}

	bot, err := storetable.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	e := record.AuditEntry{At: time.Now().UTC().Truncate(time.Second), Conv: "console:local", Tool: "shell", Outcome: "executed"}
	if err := bot.AppendAudit(ctx, e); err != nil {
		t.Fatal(err)
	}
	ro, err := storetable.OpenReadOnly(ctx, cfg)
	if err != nil {
		t.Fatalf("OpenReadOnly while the bot holds the store: %v", err)
	}
	defer ro.Close()
	got, err := ro.QueryAudit(ctx, record.AuditFilter{})
	if err != nil || len(got) != 1 || got[0].Tool != "shell" {
		t.Fatalf("read-only QueryAudit = %v, %v", got, err)
	}
	if err := ro.AppendAudit(ctx, e); err == nil {
		t.Error("a read-only store accepted a write")
	}
}

func TestCreatableReportsAnUnwritableDirectory(t *testing.T) {
	d, _ := storetable.Lookup("sqlite")
	if err := d.Creatable(configAt(":memory:")); err == nil {
		t.Error("Creatable of an in-memory DSN = nil")
	}
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := d.Creatable(configAt(filepath.Join(dir, "gatehouse.db"))); err == nil {
		t.Error("Creatable in a read-only directory = nil")
	}
}

// TestPostgresDSNChecked: a postgres store.dsn that does not parse is
// found without connecting, naming the key and never the password; one
// that parses is fine, and Where names its host, port and database only.
func TestPostgresDSNChecked(t *testing.T) {
	cfg := configAt("postgres://bot:hunter2pw@db.example:notaport/gatehouse")
	cfg.Store.Driver = "postgres"
	err := storetable.Check(cfg)
	if err == nil || !strings.HasPrefix(err.Error(), "store.dsn: ") || strings.Contains(err.Error(), "hunter2pw") {
		t.Errorf("Check of a DSN with a bad port = %v; want an error naming store.dsn without the password", err)
	}
	cfg.Store.DSN = "postgres://bot:hunter2pw@db.example:5433/gatehouse?sslmode=disable"
	if err := storetable.Check(cfg); err != nil {
		t.Errorf("Check of a good DSN = %v", err)
	}
	d, _ := storetable.Lookup("postgres")
	if got := d.Where(cfg); got != "db.example:5433/gatehouse" {
		t.Errorf("Where = %q; want db.example:5433/gatehouse", got)
	}
}

// TestDriversShareSchemaVersions: every driver has as many migrations as
// the others, so a schema version means one schema in every driver: a
// migration added to one driver needs its counterpart in the others.
func TestDriversShareSchemaVersions(t *testing.T) {
	ds := storetable.Drivers()
	for _, d := range ds[1:] {
		if d.SchemaVersion != ds[0].SchemaVersion {
			t.Errorf("driver %s is at schema version %d, %s at %d; give each migration its counterpart",
				d.Name, d.SchemaVersion, ds[0].Name, ds[0].SchemaVersion)
		}
	}
}
