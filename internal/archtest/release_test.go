package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// leftOut are packages the release's bot must not link (issue 34: the
// release is at most 16 MB): each was pulled in for one function.
var leftOut = []string{
	"github.com/pressly/goose/v3", // store/internal/migrate runs the migrations
	"text/template",               // goose's, and see TestReleaseKeepsDeadMethodsOut
	"html/template",
	// net/http's bundled HTTP/2 (0.5 MB), left out by the build tag
	// nethttpomithttp2 (omitHTTP2); hpack comes only with it.
	"vendor/golang.org/x/net/http2/hpack",
	"golang.org/x/net/http2",
	"golang.org/x/net/http2/hpack",
	// Go's zone database uncompressed (0.41 MB); internal/tzdata embeds
	// it compressed (95 KB) for systems without zone files.
	"time/tzdata",
	// core/tools/mcp speaks MCP itself (client.go, jsonrpc.go, stdio.go,
	// streamable.go) and validates schemas itself (jsonschema.go); the
	// SDK stays in the tests' fake server.
	"github.com/modelcontextprotocol/go-sdk/mcp",
	"github.com/google/jsonschema-go/jsonschema",
	"github.com/segmentio/encoding/json",
	"github.com/yosida95/uritemplate/v3",
	"golang.org/x/oauth2",
	"encoding/gob",
	// internal/metrics writes the Prometheus text format itself: the
	// library and runtime/metrics cost 2.6 ms of init at every start.
	"github.com/VictoriaMetrics/metrics",
	"runtime/metrics",
	// store/postgres speaks to PostgreSQL through pgconn alone (its
	// internal/pgq): pgx's type system, pool and database/sql driver made
	// the PostgreSQL build 3 MB larger. (pgconn itself imports pgtype for
	// one constant; the linker keeps little of it.)
	"github.com/jackc/pgx/v5",
	"github.com/jackc/pgx/v5/pgxpool",
	"github.com/jackc/pgx/v5/stdlib",
	"github.com/jackc/puddle/v2",
}

// omitHTTP2 is the build tag every release build has: net/http without its
// bundled HTTP/2. The bot's clients and servers speak HTTP/1.1.
const omitHTTP2 = "nethttpomithttp2"

// releaseBuild is one build of .goreleaser.yaml.
type releaseBuild struct {
	ID   string   `yaml:"id"`
	Main string   `yaml:"main"`
	Tags []string `yaml:"tags"`
}

// releaseBuilds reads the builds of .goreleaser.yaml.
func releaseBuilds(t *testing.T) []releaseBuild {
	t.Helper()
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Builds []releaseBuild `yaml:"builds"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(f.Builds) == 0 {
		t.Fatal(".goreleaser.yaml has no builds")
	}
	return f.Builds
}

// smallRelease is the tags of the release's SQLite-only bot (the build
// "bot" of .goreleaser.yaml).
func smallRelease(t *testing.T) string {
	t.Helper()
	for _, b := range releaseBuilds(t) {
		if b.ID == "bot" {
			return strings.Join(b.Tags, ",")
		}
	}
	t.Fatal(`.goreleaser.yaml has no build "bot"`)
	return ""
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestReleaseLeavesOut: every release build of cmd/bot (.goreleaser.yaml's
// builds, with their tags: the SQLite-only bot and the one with
// PostgreSQL) links none of leftOut.
func TestReleaseLeavesOut(t *testing.T) {
	for _, b := range releaseBuilds(t) {
		tags := strings.Join(b.Tags, ",")
		out, err := exec.Command(goTool(), "list", "-deps", "-tags", tags, "../../"+b.Main).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		deps := strings.Fields(string(out))
		for _, p := range leftOut {
			if slices.Contains(deps, p) {
				t.Errorf("the release's %s links %s (go list -deps -tags %q %s); it was left out for its size", b.ID, p, tags, b.Main)
			}
		}
	}
}

// TestReleaseBuildsLeaveHTTP2Out: every build of the bot that ships
// (.goreleaser.yaml's builds and the Dockerfile's) has the tag omitHTTP2,
// which leaves net/http's HTTP/2 out (0.5 MB).
func TestReleaseBuildsLeaveHTTP2Out(t *testing.T) {
	for _, b := range releaseBuilds(t) {
		if !slices.Contains(b.Tags, omitHTTP2) {
			t.Errorf(".goreleaser.yaml: build %s has tags %v, without %s", b.ID, b.Tags, omitHTTP2)
		}
	}
	docker, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	builds := 0
	for _, line := range strings.Split(string(docker), "\n") {
		if strings.Contains(line, "go build") {
			builds++
			if !strings.Contains(line, "-tags "+omitHTTP2) {
				t.Errorf("Dockerfile: %q: without -tags %s", strings.TrimSpace(line), omitHTTP2)
			}
		}
	}
	if builds == 0 {
		t.Error("Dockerfile: no go build line found")
	}
}

// TestReleaseKeepsDeadMethodsOut: nothing the release's bot links calls a
// method chosen at run time (reflect's Value.Method or MethodByName, as
// text/template and html/template do to run a template). Once one such
// call is reachable, the linker keeps every exported method of every type
// the binary has, used or not: html/template made the release 4.7 MB
// larger that way (19.8 MB to 24.5 MB) though its own code is 0.4 MB.
// Build HTML with html.EscapeString and a strings.Builder instead.
func TestReleaseKeepsDeadMethodsOut(t *testing.T) {
	if testing.Short() {
		t.Skip("links the release binary")
	}
	var flagged []string
	for _, e := range linkEdges(t, smallRelease(t)) {
		// -dumpdep marks a caller <ReflectMethod> when it calls a method
		// chosen at run time.
		if strings.HasSuffix(e.from, "<ReflectMethod>") {
			name := strings.TrimSpace(strings.TrimSuffix(e.from, "<ReflectMethod>"))
			if !slices.Contains(flagged, name) {
				flagged = append(flagged, name)
			}
		}
	}
	if len(flagged) > 0 {
		t.Errorf("the release's bot calls methods chosen at run time, so it keeps every exported method: %s", strings.Join(flagged, ", "))
	}
}
