package archtest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// leftOut are packages the release's bot must not link (issue 34: the
// release is at most 16 MB): each was pulled in for one function.
var leftOut = []string{
	"github.com/pressly/goose/v3", // store/internal/migrate runs the migrations
	"text/template",               // goose's, and see TestReleaseKeepsDeadMethodsOut
	"html/template",
	// core/tools/mcp speaks MCP itself (client.go, jsonrpc.go, stdio.go,
	// streamable.go) and validates schemas itself (jsonschema.go); the
	// SDK stays in the tests' fake server.
	"github.com/modelcontextprotocol/go-sdk/mcp",
	"github.com/google/jsonschema-go/jsonschema",
	"github.com/segmentio/encoding/json",
	"github.com/yosida95/uritemplate/v3",
	"golang.org/x/oauth2",
	"encoding/gob",
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestReleaseLeavesOut: the release build of cmd/bot (-tags nopostgres)
// links none of leftOut.
func TestReleaseLeavesOut(t *testing.T) {
	out, err := exec.Command(goTool(), "list", "-deps", "-tags", "nopostgres", "../../cmd/bot").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, p := range leftOut {
		if slices.Contains(deps, p) {
			t.Errorf("the release's bot links %s (go list -deps -tags nopostgres ./cmd/bot); it was left out for its size", p)
		}
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
	bin := filepath.Join(t.TempDir(), "bot")
	cmd := exec.Command(goTool(), "build", "-tags", "nopostgres", "-trimpath", "-ldflags=-s -w -dumpdep", "-o", bin, "../../cmd/bot")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var flagged []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// -dumpdep prints "from -> to" edges, a caller marked
		// <ReflectMethod> when it calls a method chosen at run time.
		from, _, ok := strings.Cut(sc.Text(), " -> ")
		if ok && strings.HasSuffix(from, "<ReflectMethod>") {
			name := strings.TrimSpace(strings.TrimSuffix(from, "<ReflectMethod>"))
			if !slices.Contains(flagged, name) {
				flagged = append(flagged, name)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v", err)
	}
	if len(flagged) > 0 {
		t.Errorf("the release's bot calls methods chosen at run time, so it keeps every exported method: %s", strings.Join(flagged, ", "))
	}
}
