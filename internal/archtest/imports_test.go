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
// it, except those under one of except) to import any package under one of
// deny, except the packages allow.
type rule struct {
	from   string
	except []string
	deny   []string
	allow  []string
	why    string
}

// features are the product's features at the top of the module: each knows
// core, the record types and the leaves, never the wiring, another
// feature, hitl, a gateway or a store.
var features = []string{"checkpoint", "schedule", "budget", "attach", "pairing", "webhooks", "skills"}

// top is every top-level part of the module but core and internal's leaves.
var top = append([]string{"app", "cmd", "cluster", "config", "gateways", "hitl", "store"}, features...)

// others is top without the named parts.
func others(keep ...string) []string {
	var out []string
	for _, p := range top {
		if !slices.Contains(keep, p) {
			out = append(out, p)
		}
	}
	return out
}

var rules = append([]rule{
	{from: "gateways", deny: others("gateways"),
		why: "gateways know core only; hitl, the store and the features are wired to them in app"},
	{from: "store", deny: others("store"),
		why: "store packages keep records from store/record; the interfaces they satisfy are their consumers'"},
	{from: "core", deny: top,
		why: "core knows no gateway, hitl, store, feature or wiring"},
	{from: "hitl", deny: others("hitl"), allow: []string{"store/record"},
		why: "hitl knows core and the record types; the broker satisfies gateways.Approvals without importing it"},
	{from: "store/record", deny: []string{""}, allow: []string{"core", "core/llm"},
		why: "the record types are a leaf: core, core/llm and the standard library only"},
	{from: "cluster", deny: append([]string{"app", "cmd", "config", "store/sqlite", "store/postgres"}, features...),
		why: "cluster is the machinery of several instances over the store's interfaces; the wiring chooses the driver"},
	{from: "config", deny: others("config", "schedule", "webhooks"),
		why: "config decodes the file; schedule only for its cron parser, webhooks for its names, formats and rates"},
	{from: "internal", deny: top,
		why: "internal/ keeps leaves any package may use, and test support"},
	{from: "cmd", deny: []string{"store/sqlite", "store/postgres"},
		why: "store drivers are named only in app/storetable, so a new driver needs no edit in cmd/"},
	{from: "app", except: []string{"app/storetable"}, deny: []string{"store/sqlite", "store/postgres"},
		why: "store drivers are named only in app/storetable"},
}, featureRules()...)

// featureRules keeps each feature off the wiring, the other features, hitl,
// the gateways and the store (the record types aside).
func featureRules() []rule {
	var out []rule
	for _, f := range features {
		out = append(out, rule{from: f, deny: others(f), allow: []string{"store/record"},
			why: "a feature knows core, the record types and the leaves; the wiring connects it to the rest"})
	}
	return out
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
			if !under(pkg, r.from) || slices.ContainsFunc(r.except, func(e string) bool { return under(pkg, e) }) {
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
	for _, pkg := range []string{"core", "hitl", "gateways", "gateways/telegram", "store", "store/record", "store/sqlite", "store/storetest", "cmd/bot", "app", "app/storetable"} {
		if _, ok := graph[pkg]; !ok {
			t.Fatalf("package %s not found in the module (found %d packages)", pkg, len(graph))
		}
	}
	if !slices.Contains(graph["app/storetable"], "store/sqlite") {
		t.Fatalf("app/storetable does not import store/sqlite: the graph read is wrong: %v", graph["app/storetable"])
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
		"cmd/bot":          {"store/sqlite", "app/storetable"},
		"gateways/discord": {"store"},
		"core":             {"hitl"},
		"store/record":     {"core", "external:example.com/x", "store"},
	}
	got := violations(old)
	want := 12
	if len(got) != want {
		t.Fatalf("violations = %d, want %d:\n%s", len(got), want, strings.Join(got, "\n"))
	}
	if v := violations(map[string][]string{"hitl": {"store/record", "core"}, "app/storetable": {"store/sqlite"}}); len(v) != 0 {
		t.Errorf("allowed edges reported: %v", v)
	}
}

// TestRulesKeepTheLayout: the edges the top-level layout forbids are
// caught: a feature reaching the wiring or another feature, core reaching a
// feature, a leaf reaching up, a gateway reaching the cluster; and the
// edges it allows are not.
func TestRulesKeepTheLayout(t *testing.T) {
	bad := map[string][]string{
		"checkpoint":       {"app", "schedule", "store", "hitl"},
		"core":             {"checkpoint", "cluster"},
		"internal/secrets": {"config"},
		"gateways/slack":   {"pairing", "cluster"},
		"config":           {"budget"},
		"cluster":          {"app", "store/postgres"},
		"app":              {"store/sqlite"},
	}
	got := violations(bad)
	if want := 13; len(got) != want {
		t.Fatalf("violations = %d, want %d:\n%s", len(got), want, strings.Join(got, "\n"))
	}
	good := map[string][]string{
		"checkpoint":     {"core", "store/record", "internal/textutil"},
		"cluster":        {"core", "store", "gateways"},
		"config":         {"core", "schedule", "internal/confkit"},
		"app":            {"checkpoint", "cluster", "hitl", "store", "config"},
		"app/storetable": {"store/sqlite", "store/postgres", "config"},
	}
	if v := violations(good); len(v) != 0 {
		t.Errorf("allowed edges reported: %v", v)
	}
}
