package gatewaytest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// ErrLeasesDown is what Leases answers while SetFail(true): a store that
// cannot be reached.
var ErrLeasesDown = errors.New("store unreachable")

// Leases is a gateways.Leaser in memory with the store's contract
// (store/storetest.LeaseContract) on the time package's clock, so a
// testing/synctest bubble drives it; Steal and SetFail play another
// instance and an unreachable store. It is safe for concurrent use.
type Leases struct {
	mu     sync.Mutex
	holder map[string]string
	exp    map[string]time.Time
	fail   bool
}

var _ gateways.Leaser = (*Leases)(nil)

// NewLeases returns an empty Leases.
func NewLeases() *Leases {
	return &Leases{holder: map[string]string{}, exp: map[string]time.Time{}}
}

// AcquireLease takes a free or expired lease, or renews holder's own.
func (m *Leases) AcquireLease(_ context.Context, name, holder string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return false, ErrLeasesDown
	}
	now := time.Now()
	if h, ok := m.holder[name]; ok && h != holder && now.Before(m.exp[name]) {
		return false, nil
	}
	m.holder[name], m.exp[name] = holder, now.Add(ttl)
	return true, nil
}

// ReleaseLease frees holder's lease.
func (m *Leases) ReleaseLease(_ context.Context, name, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return ErrLeasesDown
	}
	if m.holder[name] == holder {
		delete(m.holder, name)
		delete(m.exp, name)
	}
	return nil
}

// Steal gives the lease to holder for ttl, as another instance taking it
// over.
func (m *Leases) Steal(name, holder string, ttl time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holder[name], m.exp[name] = holder, time.Now().Add(ttl)
}

// SetFail makes every call fail with ErrLeasesDown, or not.
func (m *Leases) SetFail(fail bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = fail
}

// Holder returns who holds the lease ("" when free) and when it expires.
func (m *Leases) Holder(name string) (string, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holder[name], m.exp[name]
}
