package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/store"
)

// ErrLocked means another process holds the database's lock: another
// gatehouse runs on the same database. The caller stops; retrying is
// pointless while that instance runs.
var ErrLocked = store.ErrLocked

// lockPath is the lock file beside the database at path.
func lockPath(path string) string { return path + ".lock" }

// acquireLock takes the exclusive lock on the database at path: a flock on
// path+".lock", created with mode 0600 if missing, held until the returned
// file is closed (or the process ends, however it ends). It never touches
// the database file itself, so an instance refused here has changed
// nothing. The lock file records the holder's process id, for the message
// a refused instance prints.
func acquireLock(path string) (*os.File, error) {
	// A symlink to the database locks the database, not the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	lp := lockPath(path)
	// os.OpenFile sets O_CLOEXEC: a shell tool's child never inherits the
	// lock, so a detached grandchild cannot keep it after the bot ends.
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("sqlite: database %s: %w%s (lock file %s)", path, ErrLocked, holder(lp), lp)
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", lp, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) //nolint:errcheck // the pid is only informative
	}
	return f, nil
}

// holder returns " (pid N)" from the lock file at lp, or "" when it holds
// no pid.
func holder(lp string) string {
	b, err := os.ReadFile(lp)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return " (pid " + strconv.Itoa(pid) + ")"
}
