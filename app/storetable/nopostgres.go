//go:build nopostgres

package storetable

// optionalDrivers are the drivers a build may leave out; this one, tagged
// nopostgres (the small release), has none of them.
func optionalDrivers() []Driver { return nil }

// leftOut names the drivers this build left out, with what to do instead.
var leftOut = map[string]string{
	"postgres": "this binary was built without PostgreSQL (the small release, -tags nopostgres); use the gatehouse-postgres release, the Docker image, or go build ./cmd/bot",
}
