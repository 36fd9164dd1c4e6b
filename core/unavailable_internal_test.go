package core

import (
	"fmt"
	"strings"
	"testing"
)

// TestUserErrorUnavailable: a turn cut by a store that stopped answering
// (the history could not be read) tells the user to try again in a
// moment, not of an internal error.
func TestUserErrorUnavailable(t *testing.T) {
	err := fmt.Errorf("history load: postgres: load history: %w", fmt.Errorf("%w: dial tcp: connection refused", ErrUnavailable))
	if got := userError(err); !strings.Contains(got, "temporarily unavailable") || !strings.Contains(got, "try again in a moment") {
		t.Errorf("userError = %q; want it to say temporarily unavailable, try again in a moment", got)
	}
}
