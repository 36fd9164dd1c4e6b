package hitl_test

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/hitl/hitltest"
)

func TestMemoryStoreContract(t *testing.T) {
	hitltest.StoreContract(t, func(*testing.T) hitl.Store { return hitl.NewMemoryStore() })
}

func TestMemoryAuditContract(t *testing.T) {
	hitltest.AuditContract(t, func(*testing.T) hitl.Audit { return hitl.NewMemoryStore() })
}

func TestMemoryStandingContract(t *testing.T) {
	hitltest.StandingContract(t, func(*testing.T) hitl.StandingStore { return hitl.NewMemoryStanding() })
}
