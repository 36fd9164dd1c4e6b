package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitignoreCoversWhatARunCreates: `go run ./cmd/bot` in a checkout
// leaves nothing for `git status` to offer for a commit. What the bot
// creates beside config.yaml (the database, its lock, the workspace and the
// checkpoint blobs, earlier copies of workspace files) must all be matched
// by the repository's .gitignore.
func TestGitignoreCoversWhatARunCreates(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	ignore, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, dir, ".gitignore", string(ignore))
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	if out, err := exec.Command(git, "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}

	writeFile(t, filepath.Join(dir, "workspace"), "notes.txt", "old\n")
	p := startBot(t, dir, baseEnv(dir))
	p.send("write hello to notes.txt")
	token := expectToken(t, p)
	p.send("/approve " + token)
	expectLine(t, p, "The request was approved and the action ran")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	if got := readFile(t, filepath.Join(dir, "workspace", "notes.txt")); got != "hello" {
		t.Fatalf("notes.txt = %q after the approved write; want %q", got, "hello")
	}

	cmd := exec.Command(git, "-C", dir, "status", "--porcelain", "--untracked-files=all")
	cmd.Env = baseEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.TrimPrefix(line, "?? "); f != ".gitignore" && f != "config.yaml" {
			t.Errorf("git status offers %q, which the run created, for a commit", f)
		}
	}
}
