package archtest

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gatehouse-bot/gatehouse"

// rule forbids the packages under from (the package itself and those below
// it) to import any package under one of deny, except the packages allow.
type rule struct {
	from  string
	deny  []string
	allow []string
	why   string
}

var rules = []rule{
	{from: "gateways", deny: []string{"hitl", "store"},
		why: "gateways know core only; hitl and store are wired to them in internal/app"},
	{from: "store", deny: []string{"hitl", "gateways"},
		why: "store packages keep records from store/record; the interfaces they satisfy are their consumers'"},
	{from: "core", deny: []string{"gateways", "hitl", "store", "internal/app", "cmd"},
		why: "core knows no gateway, hitl or store"},
	{from: "hitl", deny: []string{"gateways", "store"}, allow: []string{"store/record"},
		why: "hitl knows core and the record types; the broker satisfies gateways.Approvals without importing it"},
	{from: "store/record", deny: []string{""}, allow: []string{"core", "core/llm"},
		why: "the record types are a leaf: core, core/llm and the standard library only"},
	{from: "cmd", deny: []string{"store/sqlite", "store/postgres"},
		why: "store drivers are named only in internal/storetable, so a new driver needs no edit in cmd/"},
	{from: "internal/app", deny: []string{"store/sqlite", "store/postgres"},
		why: "store drivers are named only in internal/storetable"},
}

// under reports whether the module-relative package rel is prefix or below it;
// the prefix "" is every package of the module.
func under(rel, prefix string) bool {
	return prefix == "" || rel == prefix || strings.HasPrefix(rel, prefix+"/")
}

// violations returns the forbidden edges of graph (module-relative package →
// module-relative imports).
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		for _, r := range rules {
			if !under(pkg, r.from) {
				continue
			}
			for _, imp := range imports {
				if slices.Contains(r.allow, imp) {
					continue
				}
				for _, d := range r.deny {
					if under(imp, d) {
						out = append(out, pkg+" imports "+imp+": "+r.why)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// moduleGraph reads the non-test imports of every package of the module
// with go/build, keeping only the module's own packages.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	graph := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var own []string
		for _, imp := range p.Imports {
			if imp == module {
				own = append(own, "")
			} else if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, r)
			} else if !isStd(imp) {
				own = append(own, "external:"+imp)
			}
		}
		graph[rel] = own
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	return graph
}

// isStd reports whether an import path is the standard library's (no dot in
// its first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestImportGraphPointsDownwards: the module's packages import only in the
// directions DESIGN.md allows (test files aside: a contract test may run a
// consumer's suite against a driver).
func TestImportGraphPointsDownwards(t *testing.T) {
	graph := moduleGraph(t)
	// The walk must have seen the packages the rules are about, or a broken
	// walk would pass.
	for _, pkg := range []string{"core", "hitl", "gateways", "gateways/telegram", "store", "store/record", "store/sqlite", "store/storetest", "cmd/bot", "internal/app", "internal/storetable"} {
		if _, ok := graph[pkg]; !ok {
			t.Fatalf("package %s not found in the module (found %d packages)", pkg, len(graph))
		}
	}
	if !slices.Contains(graph["internal/storetable"], "store/sqlite") {
		t.Fatalf("internal/storetable does not import store/sqlite: the graph read is wrong: %v", graph["internal/storetable"])
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestRulesCatchTheOldEdges: the edges this package was written to remove
// are all caught.
func TestRulesCatchTheOldEdges(t *testing.T) {
	old := map[string][]string{
		"hitl":             {"gateways", "core"},
		"store":            {"hitl", "gateways"},
		"store/sqlite":     {"hitl", "store/record"},
		"store/storetest":  {"hitl", "gateways"},
		"store/auditfmt":   {"hitl"},
		"cmd/bot":          {"store/sqlite", "internal/storetable"},
		"gateways/discord": {"store"},
		"core":             {"hitl"},
		"store/record":     {"core", "external:example.com/x", "store"},
	}
	got := violations(old)
	want := 12
	if len(got) != want {
		t.Fatalf("violations = %d, want %d:\n%s", len(got), want, strings.Join(got, "\n"))
	}
	if v := violations(map[string][]string{"hitl": {"store/record", "core"}, "internal/storetable": {"store/sqlite"}}); len(v) != 0 {
		t.Errorf("allowed edges reported: %v", v)
	}
}
