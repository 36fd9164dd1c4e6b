package store

import (
	"errors"
	"fmt"
)

// ErrNotCreated is matched (errors.Is) by the error of a read-only open of
// a store that does not exist yet: the bot creates it on its first run, so
// for `bot audit` it means nothing has been recorded yet.
var ErrNotCreated = errors.New("store: not created yet")

// ErrSchemaOld is matched (errors.Is) by the error of a read-only open of
// a store written by an older gatehouse: the bot upgrades it when it
// starts, and until then this build cannot read it.
var ErrSchemaOld = errors.New("store: schema older than this gatehouse")

// ErrLocked is matched (errors.Is) by the error of opening a store for
// the bot while another gatehouse instance runs on it. The caller stops;
// retrying is pointless while that instance runs.
var ErrLocked = errors.New("another gatehouse instance holds it")

// ErrSchemaTooNew is matched (errors.Is) by the error of opening a store
// written by a newer gatehouse; the store is left untouched. The caller
// tells the user to upgrade gatehouse.
var ErrSchemaTooNew = errors.New("database schema is newer than this gatehouse")

// SchemaTooNewError is the error of opening a store whose schema version
// is newer than this build's; it matches ErrSchemaTooNew.
type SchemaTooNewError struct {
	Database int // the store's schema version
	Known    int // the newest version this build knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this gatehouse (%d); upgrade gatehouse",
		e.Database, e.Known)
}

// Is makes errors.Is(err, ErrSchemaTooNew) true.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// SchemaOldError is the error of a read-only open of a store whose schema
// version is older than this build's; it matches ErrSchemaOld.
type SchemaOldError struct {
	Database int // the store's schema version
	Known    int // the version this build writes
}

func (e *SchemaOldError) Error() string {
	return fmt.Sprintf("database schema version %d is older than this gatehouse (%d); run the bot once to upgrade it",
		e.Database, e.Known)
}

// Is makes errors.Is(err, ErrSchemaOld) true.
func (e *SchemaOldError) Is(target error) bool { return target == ErrSchemaOld }
