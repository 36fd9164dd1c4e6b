package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// EnableTool names the call a pending skill's approval request holds
// (never offered to the model): approved with /approve TOKEN, it enables
// exactly the content the request showed (its digest), through hitl like
// any held call, four-eyes included.
const EnableTool = "enable_skill"

// maxShownContent bounds the file contents an approval request carries;
// past it a file is named with its size and SHA-256 only.
const maxShownContent = 1 << 20

// enableArgs are EnableTool's arguments: the skill, the digest approved,
// and its files' contents as the approver is shown them.
type enableArgs struct {
	Name   string            `json:"name"`
	Digest string            `json:"digest"`
	Files  map[string]string `json:"files"`
}

// EnableCall is the held call that asks the approvers to enable sk as it
// is: its name, its digest and every file (text in full, within
// maxShownContent together; anything else by size and SHA-256).
func EnableCall(sk *Skill) llm.ToolCall {
	a := enableArgs{Name: sk.Name, Digest: sk.Digest, Files: map[string]string{}}
	room := maxShownContent
	for _, f := range sk.Files {
		a.Files[f.Path] = fmt.Sprintf("(not shown: %s, sha256 %s)", sizeText(f.Size), f.SHA256)
		if f.Size > int64(room) {
			continue
		}
		data, err := readIn(sk.Dir, f.Path)
		if err != nil || !utf8.Valid(data) || int64(len(data)) != f.Size {
			continue
		}
		a.Files[f.Path] = string(data)
		room -= len(data)
	}
	args, _ := json.Marshal(a) // strings and a map of strings: cannot fail
	return llm.ToolCall{ID: "skill-" + sk.Short(), Name: EnableTool, Args: string(args)}
}

// readIn reads the file p of the folder dir through os.Root.
func readIn(dir, p string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(filepath.FromSlash(p))
}

// EnableDigest returns the skill and digest an EnableTool call's
// arguments name ("" when they are not such arguments).
func EnableDigest(args string) (name, digest string) {
	var a enableArgs
	if json.Unmarshal([]byte(args), &a) != nil {
		return "", ""
	}
	return a.Name, a.Digest
}

// RunEnable runs an approved EnableTool call: it enables the skill only
// if its content is still the content approved (the digest), recorded as
// by.
func (c *Catalog) RunEnable(ctx context.Context, args string, by core.Identity) (string, error) {
	name, d := EnableDigest(args)
	if name == "" || d == "" {
		return "", fmt.Errorf("%s: arguments without a skill and digest", EnableTool)
	}
	sk, err := c.Approve(ctx, name, d, by)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("skill %s enabled at digest %s (%d files)", sk.Name, sk.Short(), len(sk.Files)), nil
}
