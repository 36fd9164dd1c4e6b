package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// WriteTool names the tool that proposes a skill. Gate holds every call
// of it for a human, whatever the policy's rules say.
const WriteTool = "write_skill"

// WrittenBy is who a skill written by write_skill is recorded enabled by:
// the approval of the call (audited by hitl with its approver).
const WrittenBy core.Identity = "hitl:write_skill"

// Gate holds every write_skill call for approval: a rule that allows
// everything ("*": allow), a standing allow or a grant does not let it
// through (CheckGates keeps a hold unless a gate denies).
type Gate struct{}

var _ core.Gate = Gate{}

var _ core.ToolHolder = Gate{}

// Holds implements core.ToolHolder: every write_skill call is held.
func (Gate) Holds(tool string) bool { return tool == WriteTool }

// Check implements core.Gate.
func (Gate) Check(_ context.Context, a core.Action) core.Decision {
	if a.Kind == core.ActionTool && a.Call.Name == WriteTool {
		return core.Decision{Verdict: core.NeedsApproval, Rule: "skills: write_skill is always approved by a human",
			Reason: "a skill's content is approved before it is written"}
	}
	return core.Decision{Verdict: core.Allow}
}

type writeTool struct{ c *Catalog }

// WriteTool returns write_skill: run only once approved (Gate), it writes
// the skill into the first of the skills folders through os.Root and
// enables the content written.
func (c *Catalog) WriteTool() tools.Tool { return writeTool{c} }

var writeSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string"},` +
	`"body":{"type":"string"},"files":{"type":"object","additionalProperties":{"type":"string"}}},` +
	`"required":["name","description","body"]}`)

func (writeTool) Spec() tools.Spec {
	return tools.Spec{Name: WriteTool, Description: "Propose a new or changed skill (SKILL.md body, files by path); held for approval.",
		Parameters: writeSchema}
}

// writeArgs are write_skill's arguments.
type writeArgs struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Body        string            `json:"body"`
	Files       map[string]string `json:"files"`
}

// Run implements tools.Tool: it runs once a human approved the call.
func (t writeTool) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var a writeArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	files, err := a.contents()
	if err != nil {
		return "", err
	}
	if len(t.c.o.Dirs) == 0 {
		return "", errors.New("no skills folder is configured (skills.dirs)")
	}
	dir := t.c.o.Dirs[0]
	if err := writeFiles(dir, a.Name, files); err != nil {
		return "", err
	}
	sk, probs := LoadOne(dir, a.Name)
	if sk == nil {
		return "", fmt.Errorf("skill %s written but not loaded: %s", a.Name, problemsText(probs))
	}
	if _, err := t.c.Approve(ctx, a.Name, sk.Digest, WrittenBy); err != nil {
		return "", fmt.Errorf("skill %s written but not enabled: %w", a.Name, err)
	}
	return fmt.Sprintf("skill %s written to %s and enabled (%d files, digest %s)", sk.Name, sk.Dir, len(sk.Files), sk.Short()), nil
}

// contents checks the proposal against the specification and our bounds
// and returns every file to write, SKILL.md first.
func (a writeArgs) contents() (map[string]string, error) {
	fm, err := yaml.Marshal(struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}{a.Name, a.Description})
	if err != nil {
		return nil, fmt.Errorf("front matter: %w", err)
	}
	md := "---\n" + string(fm) + "---\n" + a.Body
	parsed, _, err := Parse([]byte(md))
	if err != nil {
		return nil, err
	}
	if probs := Validate(parsed, a.Name); len(probs) > 0 {
		return nil, fmt.Errorf("not a valid skill: %s", problemsText(probs))
	}
	files := map[string]string{SkillFile: md}
	total := len(md)
	for p, content := range a.Files {
		clean, err := confined(p)
		if err != nil {
			return nil, err
		}
		if clean == SkillFile || clean != p {
			return nil, fmt.Errorf("file %q: give a plain relative path other than SKILL.md", textShown(p, 200))
		}
		files[clean] = content
		total += len(content)
	}
	switch {
	case len(md) > MaxSkillMD:
		return nil, fmt.Errorf("SKILL.md over %d KiB", MaxSkillMD>>10)
	case len(files) > MaxSkillFiles:
		return nil, fmt.Errorf("more than %d files", MaxSkillFiles)
	case total > MaxSkillBytes:
		return nil, fmt.Errorf("over %d MiB together", MaxSkillBytes>>20)
	}
	return files, nil
}

// writeFiles writes files into dir/name through os.Root: never outside
// dir, folders 0700, files 0600.
func writeFiles(dir, name string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("skills folder: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("skills folder: %w", err)
	}
	defer root.Close()
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		full := path.Join(name, p)
		if d := path.Dir(full); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("write skill %s: %w", name, err)
			}
		}
		if err := root.WriteFile(full, []byte(files[p]), 0o600); err != nil {
			return fmt.Errorf("write skill %s: %w", name, err)
		}
	}
	return nil
}

// problemsText joins problems for an error.
func problemsText(probs []Problem) string {
	out := make([]string, 0, len(probs))
	for _, p := range probs {
		if !p.Warning {
			out = append(out, p.Field+": "+p.Rule)
		}
	}
	return strings.Join(out, "; ")
}
