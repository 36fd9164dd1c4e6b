package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
)

var _ tools.Tool = (*skillTool)(nil)

// skillTool is the read-only `skill` tool.
type skillTool struct{ c *Catalog }

// Tool returns the read-only `skill` tool over c: the instructions of an
// enabled skill the conversation may use, or one of its files (text,
// confined to the folder, at most MaxFileShown bytes), read as its
// approved content or not at all.
func (c *Catalog) Tool() tools.Tool { return skillTool{c} }

var skillSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},` +
	`"path":{"type":"string","description":"a file of the skill; absent: its instructions"}},"required":["name"]}`)

func (skillTool) Spec() tools.Spec {
	return tools.Spec{Name: core.SkillTool, Description: "Load a listed skill's instructions, or one of its files.",
		Parameters: skillSchema, ReadOnly: true}
}

// Run implements tools.Tool.
func (t skillTool) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct{ Name, Path string }
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	conv, _ := tools.ConversationOf(ctx)
	var sk *Skill
	for _, s := range t.c.Offered(ctx, conv) {
		if s.Name == args.Name {
			sk = s
		}
	}
	if sk == nil {
		return "", fmt.Errorf("no skill named %q is enabled here; use a name from your skills list", textShown(args.Name, MaxName+8))
	}
	want := ""
	if args.Path != "" {
		p, err := confined(args.Path)
		if err != nil {
			return "", err
		}
		want = p
	}
	now, data, _ := loadWant(filepath.Dir(sk.Dir), sk.Name, want)
	if now == nil || now.Digest != sk.Digest {
		if err := t.c.Refresh(ctx); err != nil {
			t.c.o.Log.Warn().Err(err).Msg("skills: refresh after a change")
		}
		return "", fmt.Errorf("skill %s changed since it was approved: it is pending approval again and cannot be used", sk.Name)
	}
	t.c.o.Log.Info().Str("conv", conv.Key()).Str("skill", sk.Name).Str("path", want).Msg("skills: skill used")
	if want == "" {
		return instructions(now), nil
	}
	return fileText(want, data)
}

// confined checks a file path the model gave: relative, inside the
// folder. os.Root confines the read as well; this only words the refusal.
func confined(p string) (string, error) {
	clean := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
		return "", fmt.Errorf("path %q leaves the skill's folder: give a path inside it, such as scripts/run.sh", textShown(p, 200))
	}
	return clean, nil
}

// instructions is what the skill tool returns for a skill: where it is,
// its files, and its instructions.
func instructions(sk *Skill) string {
	names := make([]string, len(sk.Files))
	for i, f := range sk.Files {
		names[i] = f.Path
	}
	return fmt.Sprintf("Skill %s, in the folder %s (files: %s). Its scripts run only through the shell tool.\n\n%s",
		sk.Name, sk.Dir, strings.Join(names, ", "), sk.Body)
}

// fileText is one of a skill's files as the model may read it: text only,
// cut at MaxFileShown bytes.
func fileText(p string, data []byte) (string, error) {
	if data == nil {
		return "", fmt.Errorf("the skill has no file %q", textShown(p, 200))
	}
	cut := len(data) > MaxFileShown
	if cut {
		data = data[:MaxFileShown]
		for len(data) > 0 && !utf8.Valid(data) { // a rune cut in two
			data = data[:len(data)-1]
		}
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return "", fmt.Errorf("%s is not text: the skill tool shows text files only", textShown(p, 200))
	}
	if cut {
		return string(data) + fmt.Sprintf("\n[cut at %d KiB]", MaxFileShown>>10), nil
	}
	return string(data), nil
}
