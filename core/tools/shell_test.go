package tools

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func runShell(t *testing.T, ctx context.Context, sh Tool, command string) (string, error) {
	t.Helper()
	raw := []byte(`{"command":` + strconv.Quote(command) + `}`)
	return sh.Run(ctx, raw)
}

func TestShellResults(t *testing.T) {
	dir := t.TempDir()
	sh := NewShell(ShellOptions{Workspace: dir})
	tests := []struct {
		name, command, want string
		failed              bool
	}{
		{"stdout", "echo hi", "exit 0\n--- stdout\nhi", false},
		{"silent", "true", "exit 0", false},
		{"exit code", "exit 3", "exit 3", true},
		{"stderr", "echo out; echo oops >&2; exit 1", "exit 1\n--- stdout\nout\n--- stderr\noops", true},
		{"workspace dir", "pwd", "exit 0\n--- stdout\n" + dir, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runShell(t, context.Background(), sh, tt.command)
			if out != tt.want {
				t.Errorf("output %q, want %q", out, tt.want)
			}
			if failed := errors.Is(err, ErrFailed); failed != tt.failed || (err != nil && !failed) {
				t.Errorf("err %v, want failed=%v", err, tt.failed)
			}
		})
	}
}

func TestShellOutputCap(t *testing.T) {
	out, err := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir()}), "head -c 100000 /dev/zero | tr '\\0' x")
	if err != nil {
		t.Fatal(err)
	}
	want := "…[truncated " + strconv.Itoa(100000-shellStreamMax) + " bytes]"
	if !strings.HasSuffix(out, want) || len(out) > shellStreamMax+100 {
		t.Errorf("output of %d bytes ends %q, want %q", len(out), out[max(0, len(out)-40):], want)
	}
}

func TestShellEmptyCommand(t *testing.T) {
	if _, err := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir()}), "  "); !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("err %v", err)
	}
}

// TestShellKillsProcessGroup checks that a background child dies with the
// command, both on timeout and after a normal exit.
func TestShellKillsProcessGroup(t *testing.T) {
	// The timeout only has to outlast the start of the supervisor and sh
	// (slow under -race on a loaded machine): an attempt whose command had
	// not printed its child's pid yet proves nothing, and the next waits
	// longer. The normal exit has no timeout.
	tests := []struct {
		name, command string
		timeouts      []time.Duration
	}{
		{"timeout", "sleep 1000 & echo $!; wait", []time.Duration{3 * time.Second, 10 * time.Second, 30 * time.Second}},
		{"normal exit", "sleep 1000 & echo $!", []time.Duration{time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, timeout := range tt.timeouts {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				out, _ := runShell(t, ctx, NewShell(ShellOptions{Workspace: t.TempDir()}), tt.command)
				cancel()
				_, pidText, ok := strings.Cut(out, "--- stdout\n")
				pid, err := strconv.Atoi(strings.TrimSpace(pidText))
				if ok && err == nil {
					waitGone(t, pid)
					return
				}
				t.Logf("no pid in %q after %v; trying a longer timeout", out, timeout)
			}
			t.Fatal("the command never printed its child's pid before its timeout")
		})
	}
}

// waitGone fails unless the process exits (or is a zombie awaiting its
// reaper); SIGKILL is immediate, so the wait only guards against a hang.
// A process still there when the wait fails is killed.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() && syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	testutil.WaitFor(t, "process "+strconv.Itoa(pid)+" to end", func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || syscall.Kill(pid, 0) != nil {
			return true
		}
		fields := strings.Fields(string(stat))
		return len(fields) > 2 && fields[2] == "Z"
	})
}

func TestShellEnvironmentIsScrubbed(t *testing.T) {
	const planted = "plantedvalue-1234567"
	t.Setenv("MY_SERVICE_TOKEN", "tok-by-name")
	t.Setenv("INNOCENT_LOOKING", "prefix "+planted+" suffix")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("slack_channel", "general")
	t.Setenv("GATEHOUSE_VISIBLE", "visible-value")
	out, err := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir(), Secrets: secrets.New(planted), EnvPrefixes: []string{"SLACK_"}}), "env")
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"MY_SERVICE_TOKEN", "tok-by-name", "INNOCENT_LOOKING", planted, "OPENAI_BASE_URL", "slack_channel"} {
		if strings.Contains(out, gone) {
			t.Errorf("env shows %q", gone)
		}
	}
	if !strings.Contains(out, "GATEHOUSE_VISIBLE=visible-value") {
		t.Error("an ordinary variable was removed")
	}
}

// TestShellEnvironmentSecretsUnderOtherNames: variables whose names say
// they hold a secret without the suffixes the redaction set goes by
// (SECRET_KEY_BASE, DB_PASS, GITHUB_PAT, …), and any whose value is a URL
// with a password (a proxy's credentials), do not reach a command; they
// used to, and `env` showed them.
func TestShellEnvironmentSecretsUnderOtherNames(t *testing.T) {
	hidden := map[string]string{
		"SECRET_KEY_BASE":      "rails-base-5e11",
		"CLIENT_SECRET_ID":     "cs-5e12",
		"DB_PASS":              "db-pass-5e13",
		"SMTP_PASSPHRASE":      "phrase-5e14",
		"GITHUB_PAT":           "pat-5e15",
		"VAULT_TOKEN_VALUE":    "vault-5e16",
		"MYAPP_APIKEY":         "apikey-5e17",
		"GOOGLE_CREDENTIALS_1": "gcred-5e18",
		"SSH_PRIVATE_KEY_B64":  "priv-5e19",
		"HTTPS_PROXY":          "http://proxyuser:proxy-5e20@proxy.example:3128",
	}
	for name, value := range hidden {
		t.Setenv(name, value)
	}
	t.Setenv("NO_PROXY_HOSTS", "http://proxy.example:3128")
	t.Setenv("GIT_AUTHOR_NAME", "Ada")
	out, err := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir()}), "env")
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range hidden {
		if strings.Contains(out, name+"=") || strings.Contains(out, value) {
			t.Errorf("env shows %s", name)
		}
	}
	for _, kept := range []string{"NO_PROXY_HOSTS=http://proxy.example:3128", "GIT_AUTHOR_NAME=Ada"} {
		if !strings.Contains(out, kept) {
			t.Errorf("an ordinary variable was removed: %s", kept)
		}
	}
}

func TestShellRedactsOutput(t *testing.T) {
	out, _ := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir(), Secrets: secrets.New("s3cr3t-value")}), "echo s3cr3t-value")
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("output %q", out)
	}
}

// TestShellEnvPrefixes: the gateways' prefixes handed to NewShell (from the
// gateway table) keep their variables from commands, in any case; other
// variables pass.
func TestShellEnvPrefixes(t *testing.T) {
	t.Setenv("PIGEON_ROOST", "loft-7")
	t.Setenv("pigeon_lower", "coop-8")
	t.Setenv("GATEHOUSE_VISIBLE", "visible-value")
	out, err := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir(), EnvPrefixes: []string{"PIGEON_"}}), "env")
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"PIGEON_ROOST", "loft-7", "pigeon_lower", "coop-8"} {
		if strings.Contains(out, gone) {
			t.Errorf("env shows %q", gone)
		}
	}
	if !strings.Contains(out, "GATEHOUSE_VISIBLE=visible-value") {
		t.Error("an ordinary variable was removed")
	}
	out, err = runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir()}), "env")
	if err != nil || !strings.Contains(out, "PIGEON_ROOST=loft-7") {
		t.Errorf("without the prefix the variable is removed too (err %v)", err)
	}
}
