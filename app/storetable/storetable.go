// Package storetable is the one list of the bot's store drivers: it maps
// store.driver to the functions that open a store, for the bot (app)
// and read-only for `bot audit` and `bot doctor` (cmd/bot). Neither names a
// driver: adding one is its package under store/ plus one entry in Drivers.
package storetable

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// Driver is one store driver.
type Driver struct {
	// Name is its store.driver value.
	Name string
	// Open opens the store the bot runs on: created or upgraded as needed,
	// writable, and held by this process alone. now is the clock that
	// dates usage (UTC days); nil means time.Now.
	Open func(ctx context.Context, cfg *config.Config, now func() time.Time) (store.Store, error)
	// OpenReadOnly opens an existing store for reading only: nothing is
	// created, upgraded or written, and a running bot is not disturbed. A
	// store that does not exist yet gives an error matching
	// store.ErrNotCreated; one whose schema is older than this build's
	// (the bot upgrades it when it starts), one matching
	// store.ErrSchemaOld.
	OpenReadOnly func(ctx context.Context, cfg *config.Config) (store.Store, error)
	// Where names the configured store for people (a file path, a host and
	// database), never with a password.
	Where func(cfg *config.Config) string
	// Creatable returns why the bot could not create the configured store
	// that does not exist yet, or nil when it could.
	Creatable func(cfg *config.Config) error
	// Check finds what is wrong with the store's keys without connecting
	// or creating anything (a DSN that does not parse), naming the key;
	// the bot then exits as on any configuration error.
	Check func(cfg *config.Config) error
	// SchemaVersion is the schema version this build writes.
	SchemaVersion int
	// Blobs returns the directory beside the store where workspace
	// checkpoints keep file contents (the store holds their index).
	Blobs func(cfg *config.Config) (string, error)
}

// Blobs returns the checkpoint blob directory of the configured store.
func Blobs(cfg *config.Config) (string, error) {
	d, err := Lookup(cfg.Store.Driver)
	if err != nil {
		return "", err
	}
	return d.Blobs(cfg)
}

// Drivers returns the driver table. Each call returns a fresh slice.
func Drivers() []Driver {
	return append([]Driver{sqliteDriver()}, optionalDrivers()...)
}

// Lookup returns the driver for store.driver; "" is the default, sqlite. A
// name without a driver in this build is an error naming those it has.
func Lookup(name string) (Driver, error) {
	if name == "" {
		name = "sqlite"
	}
	var names []string
	for _, d := range Drivers() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, strconv.Quote(d.Name))
	}
	if why, ok := leftOut[name]; ok {
		return Driver{}, fmt.Errorf("store.driver: %q: %s", name, why)
	}
	return Driver{}, fmt.Errorf("store.driver: %q is not supported by this build yet (use %s)", name, strings.Join(names, " or "))
}

// Check checks the configured store's keys without connecting; see
// Driver.Check.
func Check(cfg *config.Config) error {
	d, err := Lookup(cfg.Store.Driver)
	if err != nil {
		return err
	}
	return d.Check(cfg)
}

// Open opens the configured store for the bot; now dates usage (nil:
// time.Now).
func Open(ctx context.Context, cfg *config.Config, now func() time.Time) (store.Store, error) {
	d, err := Lookup(cfg.Store.Driver)
	if err != nil {
		return nil, err
	}
	return d.Open(ctx, cfg, now)
}

// OpenReadOnly opens the configured, existing store for reading only; see
// Driver.OpenReadOnly.
func OpenReadOnly(ctx context.Context, cfg *config.Config) (store.Store, error) {
	d, err := Lookup(cfg.Store.Driver)
	if err != nil {
		return nil, err
	}
	return d.OpenReadOnly(ctx, cfg)
}

// sqliteDriver is the embedded default: store.dsn is a file path.
func sqliteDriver() Driver {
	return Driver{
		Name: "sqlite",
		Open: func(ctx context.Context, cfg *config.Config, now func() time.Time) (store.Store, error) {
			db, err := sqlite.Open(ctx, cfg.Store.DSN.Value(), sqlite.Options{
				History:   cfg.LLM.History,
				Retention: cfg.Store.Retention.D(),
				Now:       now,
				// The bot prunes once it receives (app's runInside).
				PruneLater: true,
			})
			if err != nil {
				return nil, fmt.Errorf("store: %w", err)
			}
			return db, nil
		},
		OpenReadOnly: func(ctx context.Context, cfg *config.Config) (store.Store, error) {
			db, err := sqlite.Open(ctx, cfg.Store.DSN.Value(), sqlite.Options{ReadOnly: true})
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %w", store.ErrNotCreated, err)
			}
			if err != nil {
				return nil, err
			}
			return db, nil
		},
		// The blobs live next to the database file: gatehouse.db.blobs/.
		Blobs: func(cfg *config.Config) (string, error) {
			path, err := sqlite.Path(cfg.Store.DSN.Value())
			if err != nil {
				return "", fmt.Errorf("store.dsn: %w", err)
			}
			return path + ".blobs", nil
		},
		// A sqlite DSN is a file path (or a file: URI): nothing secret.
		Where: func(cfg *config.Config) string { return cfg.Store.DSN.Value() },
		Creatable: func(cfg *config.Config) error {
			path, err := sqlite.Path(cfg.Store.DSN.Value())
			if err != nil {
				return err
			}
			return writableDir(filepath.Dir(path))
		},
		// A file path is checked when it is opened (doctor: Creatable).
		Check:         func(*config.Config) error { return nil },
		SchemaVersion: sqlite.SchemaVersion(),
	}
}

// writableDir returns why files cannot be created in dir (or in dir's
// parent, when dir does not exist yet), or nil.
func writableDir(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := writableProbe(filepath.Dir(dir)); err != nil {
			return fmt.Errorf("does not exist and cannot be created: %w", err)
		}
		return nil
	}
	return writableProbe(dir)
}

// writableProbe creates and removes a file in dir.
func writableProbe(dir string) error {
	f, err := os.CreateTemp(dir, ".gatehouse-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return errors.Join(err, os.Remove(name))
	}
	return os.Remove(name)
}
