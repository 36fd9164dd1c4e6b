//go:build nopostgres

package storetable

import (
	"strings"
	"testing"
)

// TestSmallBuildSaysPostgresIsLeftOut: the small release (-tags
// nopostgres) has no PostgreSQL driver, and store.driver: postgres says
// where to get one rather than that it is unsupported.
func TestSmallBuildSaysPostgresIsLeftOut(t *testing.T) {
	if len(Drivers()) != 1 || Drivers()[0].Name != "sqlite" {
		t.Fatalf("drivers %v; want sqlite alone", Drivers())
	}
	_, err := Lookup("postgres")
	if err == nil || !strings.Contains(err.Error(), "store.driver") || !strings.Contains(err.Error(), "gatehouse-postgres") {
		t.Fatalf("Lookup(postgres) = %v; want store.driver named and where to get PostgreSQL", err)
	}
}
