package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// goSuffix is how a line from versionLine ends for a binary built by the
// toolchain running these tests.
var goSuffix = runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"

func TestVersionLine(t *testing.T) {
	t.Parallel()
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	info := func(mainVersion string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/gatehouse-bot/gatehouse", Version: mainVersion}, Settings: settings}
	}
	osArch := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name string
		s    stamp
		info *debug.BuildInfo
		want string
	}{
		{"stamped", stamp{"1.2.3", "0a1b2c", "2026-11-26T12:00:00Z"},
			info("(devel)", vcs("vcs.revision", "ffff", "vcs.time", "2020-01-01T00:00:00Z")),
			"gatehouse 1.2.3 (commit 0a1b2c, committed 2026-11-26T12:00:00Z, go1.99.1 " + osArch + ")"},
		{"version only stamped", stamp{version: "1.2.3"},
			info("(devel)", vcs("vcs.revision", "ffff", "vcs.time", "2020-01-01T00:00:00Z", "vcs.modified", "false")),
			"gatehouse 1.2.3 (commit ffff, committed 2020-01-01T00:00:00Z, go1.99.1 " + osArch + ")"},
		{"go install of a tag", stamp{}, info("v1.2.3", nil),
			"gatehouse v1.2.3 (go1.99.1 " + osArch + ")"},
		{"go build in a dirty checkout", stamp{},
			info("v0.0.0-20261126120000-0a1b2c3d4e5f+dirty", vcs("vcs.revision", "0a1b2c3d4e5f", "vcs.time", "2026-11-26T12:00:00Z", "vcs.modified", "true")),
			"gatehouse v0.0.0-20261126120000-0a1b2c3d4e5f+dirty (commit 0a1b2c3d4e5f-dirty, committed 2026-11-26T12:00:00Z, go1.99.1 " + osArch + ")"},
		{"go build without VCS information", stamp{}, info("(devel)", nil),
			"gatehouse devel (go1.99.1 " + osArch + ")"},
		{"no build information", stamp{}, nil,
			"gatehouse devel (" + goSuffix},
	} {
		if got := versionLine(tc.s, tc.info); got != tc.want {
			t.Errorf("%s: versionLine = %q; want %q", tc.name, got, tc.want)
		}
	}
}

// buildBotWith builds ./cmd/bot with extra go build flags into a fresh
// directory and returns the binary's path.
func buildBotWith(t *testing.T, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bot")
	args := append([]string{"build", "-o", out}, flags...)
	cmd := exec.Command(goTool(), append(args, ".")...)
	cmd.Env = os.Environ()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// versionOf runs `bin version` and returns its one line of output.
func versionOf(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, "version")
	cmd.Dir, cmd.Env = dir, baseEnv(dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	line, rest, _ := strings.Cut(string(out), "\n")
	if rest != "" {
		t.Errorf("bot version printed more than one line: %q", out)
	}
	return line
}

// TestVersionStampedByLdflags: what the release build stamps with -ldflags
// -X (as .goreleaser.yaml does) is what `bot version` prints.
func TestVersionStampedByLdflags(t *testing.T) {
	t.Parallel()
	bin := buildBotWith(t, "-ldflags", "-X main.version=v1.2.3 -X main.commit=0123456789abcdef -X main.date=2026-11-26T12:00:00Z")
	want := "gatehouse v1.2.3 (commit 0123456789abcdef, committed 2026-11-26T12:00:00Z, " + goSuffix
	if got := versionOf(t, bin); got != want {
		t.Errorf("bot version = %q; want %q", got, want)
	}
}

// TestVersionFallsBackToBuildInfo: a plain `go build` (TestMain's, with
// whatever GOFLAGS the machine has) stamps nothing; `bot version` then
// prints what `go version -m` reads from the binary: the main module's
// version ("devel" when it has none) and the VCS revision when one was
// recorded.
func TestVersionFallsBackToBuildInfo(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(goTool(), "version", "-m", botBin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	wantVersion, rev := "devel", ""
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/gatehouse-bot/gatehouse" && f[2] != "(devel)":
			wantVersion = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	got := versionOf(t, botBin)
	if !strings.HasPrefix(got, "gatehouse "+wantVersion+" (") || !strings.HasSuffix(got, goSuffix) {
		t.Errorf("bot version = %q; want \"gatehouse %s (… %s\"", got, wantVersion, goSuffix)
	}
	if rev != "" && !strings.Contains(got, "(commit "+rev) {
		t.Errorf("bot version = %q; want the recorded revision %s", got, rev)
	}
}

// TestVersionNamesTheCheckoutsCommit: `go build -buildvcs=true` in a git
// checkout records the revision, and `bot version` names it (with
// -dirty while the tree has uncommitted changes) and its date.
func TestVersionNamesTheCheckoutsCommit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	if fi, err := os.Stat(filepath.Join("..", "..", ".git")); err != nil || !fi.IsDir() {
		// The go command looks for a .git directory: a worktree's or a
		// submodule's .git file gets no VCS information.
		t.Skip("the module is not the root of a git clone")
	}
	head, err := exec.Command(git, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	bin := buildBotWith(t, "-buildvcs=true")
	got := versionOf(t, bin)
	if want := "(commit " + strings.TrimSpace(string(head)); !strings.Contains(got, want) {
		t.Errorf("bot version = %q; want it to contain %q", got, want)
	}
	if !strings.Contains(got, ", committed 20") || strings.HasPrefix(got, "gatehouse devel ") {
		t.Errorf("bot version = %q; want the commit's date and the version go build derives from it", got)
	}
}
