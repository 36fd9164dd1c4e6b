package gatewaytest

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// WaitFirst waits, as testutil.WaitFor does, until one of the items list
// returns (what a fake has seen so far) matches, and returns the first
// that does. what names the wait in the failure.
func WaitFirst[T any](t testing.TB, what string, list func() []T, match func(T) bool) T {
	t.Helper()
	var found T
	testutil.WaitFor(t, what, func() bool {
		for _, x := range list() {
			if match(x) {
				found = x
				return true
			}
		}
		return false
	})
	return found
}
