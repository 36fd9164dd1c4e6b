package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// policyCase is one case of a `bot policy test -cases` file.
type policyCase struct {
	name   string
	action core.Action
	want   core.Verdict
}

// caseKeys are the keys a case may have; tool and want are required.
var caseKeys = map[string]bool{"name": true, "tool": true, "args": true, "identity": true, "conversation": true, "want": true}

// wantVerdicts maps a case's want onto the decision.
var wantVerdicts = map[string]core.Verdict{"allow": core.Allow, "approve": core.NeedsApproval, "deny": core.Deny}

// runCases runs the cases file at path: one line per case and a summary.
// It returns exitFail when a case fails and exitConfig when the file is
// invalid (nothing is judged then). Cases are judged by the policy alone:
// the store's standing allows are not consulted, so the result depends on
// the configuration only.
func runCases(ctx context.Context, j *judge, path string, stdout, stderr io.Writer) int {
	cases, err := loadCases(ctx, j, path)
	if err != nil {
		fmt.Fprintf(stderr, "bot policy test: %s: %s\n", textutil.Visible(path), j.sec.Redact(textutil.Visible(err.Error())))
		return exitConfig
	}
	failed := 0
	for _, c := range cases {
		jd := j.decide(ctx, c.action)
		got := jd.Decision.Verdict
		status := "ok  "
		if got != c.want {
			status = "FAIL"
			failed++
		}
		show := func(s string) string { return j.sec.Redact(textutil.Visible(s)) }
		line := fmt.Sprintf("%s %s: %s %s → %s by %s", status, show(c.name), show(c.action.Call.Name),
			j.showEscaped(c.action.Call.Args), got, j.showEscaped(jd.Decision.Rule))
		if got != c.want {
			line += fmt.Sprintf(", want %s", c.want)
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "%d of %d cases as wanted, %d not\n", len(cases)-failed, len(cases), failed)
	if failed > 0 {
		return exitFail
	}
	return exitOK
}

// loadCases reads and checks a cases file strictly: a mapping with the one
// key cases, a non-empty list of mappings with known keys, each given once;
// every case's call is checked as `-tool`/`-args` would be. Errors name the
// line, the case and the key.
func loadCases(ctx context.Context, j *judge, path string) ([]policyCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("empty file: want cases:, a list of {name, tool, args, identity, conversation, want}")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping with the key cases", root.Line)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "cases" {
			return nil, fmt.Errorf("line %d: %s: unknown key (want cases)", k.Line, k.Value)
		}
		if list != nil {
			return nil, fmt.Errorf("line %d: cases: given twice", k.Line)
		}
		list = v
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, fmt.Errorf("cases: want a non-empty list of cases")
	}
	out := make([]policyCase, 0, len(list.Content))
	names := map[string]int{}
	for i, n := range list.Content {
		c, err := j.parseCase(ctx, n, i)
		if err != nil {
			return nil, err
		}
		if first, dup := names[c.name]; dup {
			return nil, fmt.Errorf("line %d: cases[%d]: name %q already names cases[%d]", n.Line, i, c.name, first)
		}
		names[c.name] = i
		out = append(out, c)
	}
	return out, nil
}

// parseCase reads the case n, cases[i].
func (j *judge) parseCase(ctx context.Context, n *yaml.Node, i int) (policyCase, error) {
	f, err := readCaseFields(n, i)
	if err != nil {
		return policyCase{}, err
	}
	c := policyCase{name: "case " + strconv.Itoa(i+1)}
	name, err := f.str("name", c.name)
	if err != nil {
		return c, err
	}
	c.name = name
	if name != "case "+strconv.Itoa(i+1) {
		f.where += " (" + strconv.Quote(name) + ")"
	}
	tool, err := f.str("tool", "")
	if err != nil {
		return c, err
	}
	if tool == "" {
		return c, f.fail(n.Line, "tool", "required")
	}
	if c.want, err = f.verdict(n.Line); err != nil {
		return c, err
	}
	args, err := f.args()
	if err != nil {
		return c, err
	}
	localID, localConv := gatewaytable.LocalCaller()
	identity, err := f.str("identity", localID)
	if err != nil {
		return c, err
	}
	conversation, err := f.str("conversation", localConv)
	if err != nil {
		return c, err
	}
	from, conv, err := parseWho(identity, conversation)
	if err != nil {
		return c, f.fail(n.Line, "", "%v", err)
	}
	if c.action, err = j.prepare(ctx, call{tool: tool, args: args, from: from, conv: conv}); err != nil {
		return c, f.fail(n.Line, "", "%v", err)
	}
	return c, nil
}

// caseFields are one case's keys as read, and the name its errors give
// it.
type caseFields struct {
	where string // cases[i], and the case's name once it is known
	vals  map[string]*yaml.Node
}

// readCaseFields reads the case n, cases[i]: a mapping of known keys,
// each given once.
func readCaseFields(n *yaml.Node, i int) (*caseFields, error) {
	f := &caseFields{where: fmt.Sprintf("cases[%d]", i), vals: map[string]*yaml.Node{}}
	if n.Kind != yaml.MappingNode {
		return nil, f.fail(n.Line, "", "want a mapping {name, tool, args, identity, conversation, want}")
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, v := n.Content[k], n.Content[k+1]
		if !caseKeys[key.Value] {
			return nil, f.fail(key.Line, key.Value, "unknown key (want name, tool, args, identity, conversation, want)")
		}
		if f.vals[key.Value] != nil {
			return nil, f.fail(key.Line, key.Value, "given twice")
		}
		f.vals[key.Value] = v
	}
	return f, nil
}

// fail is an error at line naming the case and its key ("" for the
// case itself).
func (f *caseFields) fail(line int, key, format string, a ...any) error {
	k := f.where
	if key != "" {
		k += "." + key
	}
	return fmt.Errorf("line %d: %s: %s", line, k, fmt.Sprintf(format, a...))
}

// str is the string at key, def when the key is absent.
func (f *caseFields) str(key, def string) (string, error) {
	v := f.vals[key]
	if v == nil {
		return def, nil
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", f.fail(v.Line, key, "want a string")
	}
	return v.Value, nil
}

// verdict is the case's want, required: allow, approve or deny. line is
// the case's.
func (f *caseFields) verdict(line int) (core.Verdict, error) {
	want, err := f.str("want", "")
	if err != nil {
		return 0, err
	}
	if want == "" {
		return 0, f.fail(line, "want", "required: allow, approve or deny")
	}
	verdict, ok := wantVerdicts[want]
	if !ok {
		return 0, f.fail(line, "want", "%q: want allow, approve or deny", want)
	}
	return verdict, nil
}

// args is the case's args as a JSON object, "{}" when absent or null.
func (f *caseFields) args() (string, error) {
	v := f.vals["args"]
	if v == nil || v.Tag == "!!null" {
		return "{}", nil
	}
	if v.Kind != yaml.MappingNode {
		return "", f.fail(v.Line, "args", "want a mapping of the call's arguments")
	}
	var m map[string]any
	if err := v.Decode(&m); err != nil {
		return "", f.fail(v.Line, "args", "%v", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", f.fail(v.Line, "args", "not expressible as JSON: %v", err)
	}
	return string(b), nil
}
