package testutil

import (
	"testing"
	"time"
)

// Delivery is one request that made or changed a message, as a fake
// received it: the message's key (its id) and when it arrived.
type Delivery struct {
	Key string
	At  time.Time
}

// CheckSpacing fails t for every delivery that arrived less than least
// after the previous one with the same key (ds holds each key's deliveries
// in order), and returns how many deliveries followed an earlier one of
// their key: the messages' edits.
func CheckSpacing(t testing.TB, ds []Delivery, least time.Duration) (edits int) {
	t.Helper()
	last := map[string]time.Time{}
	for _, d := range ds {
		if prev, ok := last[d.Key]; ok {
			edits++
			if gap := d.At.Sub(prev); gap < least {
				t.Errorf("message %s changed %v after its previous delivery; want at least %v", d.Key, gap, least)
			}
		}
		last[d.Key] = d.At
	}
	return edits
}
