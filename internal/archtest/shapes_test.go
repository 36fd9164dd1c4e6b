package archtest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// edge is one line "from -> to" of the linker's -dumpdep: from reaches to.
type edge struct{ from, to string }

var (
	edgesMu sync.Mutex
	edges   = map[string][]edge{} // by build tags
)

// linkEdges links cmd/bot with tags as the release does (CGO_ENABLED=0,
// -trimpath, -s -w) and -dumpdep, and returns the edges it printed, each
// callee's first caller. It links once per tags for the whole test run.
func linkEdges(t *testing.T, tags string) []edge {
	t.Helper()
	edgesMu.Lock()
	defer edgesMu.Unlock()
	if e, ok := edges[tags]; ok {
		return e
	}
	bin := filepath.Join(t.TempDir(), "bot")
	cmd := exec.Command(goTool(), "build", "-tags", tags, "-trimpath", "-ldflags=-s -w -dumpdep", "-o", bin, "../../cmd/bot")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out []edge
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if from, to, ok := strings.Cut(sc.Text(), " -> "); ok {
			out = append(out, edge{from, to})
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go build -tags %q -ldflags=-dumpdep: %v", tags, err)
	}
	edges[tags] = out
	return out
}

// TestReleaseSortsShareOneShape: no package of ours makes the release
// link a sort of package slices (SortFunc, SortStableFunc, SortedFunc…)
// for a struct element. Go compiles a generic function once per shape, and
// every struct is a shape of its own: each such sort brought its own
// pdqsort, 6 to 25 KB (about 120 KB of the release for ten of them).
// Sort a small slice of structs with sort.Slice or sort.SliceStable (one
// copy for every element type), or sort pointers (one shape for all).
func TestReleaseSortsShareOneShape(t *testing.T) {
	if testing.Short() {
		t.Skip("links the release binaries")
	}
	const ours = "github.com/gatehouse-bot/gatehouse/"
	for _, b := range releaseBuilds(t) {
		for _, e := range linkEdges(t, strings.Join(b.Tags, ",")) {
			callee, shape, ok := strings.Cut(e.to, "[")
			if !strings.HasPrefix(e.from, ours) || !ok || !strings.HasPrefix(callee, "slices.") {
				continue
			}
			name := strings.ToLower(callee)
			if (strings.Contains(name, "sort") || strings.Contains(name, "stable")) && strings.HasPrefix(shape, "go.shape.struct") {
				t.Errorf("the release's %s: %s sorts a slice of structs with %s (its own copy of the sort): %.120s", b.ID, e.from, callee, shape)
			}
		}
	}
}
