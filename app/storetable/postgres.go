//go:build !nopostgres

package storetable

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// optionalDrivers are the drivers a build may leave out: PostgreSQL
// (pgx's wire client, pgconn, and its Unicode tables, about 1.6 MB of
// the binary) is in every
// build but one tagged nopostgres, the small release.
func optionalDrivers() []Driver { return []Driver{postgresDriver()} }

// leftOut names the drivers this build left out, with what to do instead.
var leftOut = map[string]string{}

// postgresDriver is a PostgreSQL database: store.dsn is a connection
// string (a secret: it may hold the password). Checkpoint blobs stay on
// disk for now, beside the workspace: <tools.workspace>.blobs.
func postgresDriver() Driver {
	return Driver{
		Name: "postgres",
		Open: func(ctx context.Context, cfg *config.Config, now func() time.Time) (store.Store, error) {
			db, err := postgres.Open(ctx, cfg.Store.DSN.Value(), postgres.Options{
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
			db, err := postgres.Open(ctx, cfg.Store.DSN.Value(), postgres.Options{ReadOnly: true})
			if err != nil {
				return nil, err
			}
			return db, nil
		},
		Blobs: func(cfg *config.Config) (string, error) {
			return filepath.Clean(cfg.Tools.Workspace) + ".blobs", nil
		},
		Where: func(cfg *config.Config) string { return postgres.Where(cfg.Store.DSN.Value()) },
		// The bot creates the schema in the database the DSN names; the
		// database itself is the operator's (CREATE DATABASE).
		Creatable: func(*config.Config) error { return nil },
		Check: func(cfg *config.Config) error {
			if _, err := postgres.ParseDSN(cfg.Store.DSN.Value()); err != nil {
				return fmt.Errorf("store.dsn: %w", err)
			}
			return nil
		},
		SchemaVersion: postgres.SchemaVersion(),
	}
}
