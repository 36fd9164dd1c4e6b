package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestHelpListsEveryCommandAndFlag: `bot --help`, `-h`, `-help` and `help`
// print, on stdout with exit 0, every subcommand and every flag that the
// subcommand's own `-h` knows.
func TestHelpListsEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var help string
	for _, arg := range []string{"--help", "-h", "-help", "help"} {
		r := runOnce(t, dir, baseEnv(dir), "", arg)
		if r.code != exitOK {
			t.Fatalf("bot %s: exit %d\nstderr:\n%s", arg, r.code, r.stderr)
		}
		for _, cmd := range []string{"run", "doctor", "audit", "healthcheck", "policy test", "policy explain", "version", "help"} {
			if !regexp.MustCompile(`(?m)^  ` + cmd + `\b`).MatchString(r.stdout) {
				t.Errorf("bot %s does not list the command %s:\n%s", arg, cmd, r.stdout)
			}
		}
		help = r.stdout
	}
	flagLine := regexp.MustCompile(`(?m)^\s+-(\w+)`)
	for _, cmd := range []string{"run", "doctor", "audit", "healthcheck"} {
		r := runOnce(t, dir, baseEnv(dir), "", cmd, "-h")
		flags := flagLine.FindAllStringSubmatch(r.stderr, -1)
		if r.code != exitOK || len(flags) == 0 {
			t.Fatalf("bot %s -h: exit %d, no flags listed:\n%s", cmd, r.code, r.stderr)
		}
		for _, f := range flags {
			if !regexp.MustCompile(`\s-` + f[1] + `\b`).MatchString(help) {
				t.Errorf("bot --help does not list %s's flag -%s:\n%s", cmd, f[1], help)
			}
		}
	}
}

// TestConfigErrorsPrintedOnce: configuration errors found after the YAML
// parsed — no gateway, an unsupported store driver, a postgres store.dsn
// that does not parse, a required value left
// empty by an unset ${VAR} (named) — exit 2 with the error printed exactly
// once, and nothing created.
func TestConfigErrorsPrintedOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, want string
		cmds             [][]string
	}{
		{"no gateway", "gateways:\n  console: {enabled: false}\n", "gateways: none is enabled", [][]string{{}, {"run"}}},
		{"store driver", "store: {driver: mysql, dsn: 'mysql://bot@db/gatehouse'}\n", `store.driver: want "sqlite" or "postgres", got "mysql"`,
			[][]string{{"run"}, {"doctor"}, {"audit"}, {"healthcheck"}}},
		// The password never shows: TestPostgresFaults checks it.
		{"postgres dsn", "store: {driver: postgres, dsn: 'postgres://bot:hunter2pw@db:notaport/gatehouse'}\n",
			`store.dsn: not a PostgreSQL connection string: invalid port`,
			[][]string{{"run"}, {"doctor"}, {"audit"}, {"healthcheck"}}},
		{"unset base_url", "llm:\n  providers:\n    - {name: p, base_url: '${MY_LLM_URL}'}\n", "${MY_LLM_URL}",
			[][]string{{"run"}, {"doctor"}, {"audit"}}},
		{"unset telegram token", "gateways:\n  telegram: {enabled: true, token: '${MY_TG_TOKEN}'}\n", "${MY_TG_TOKEN}",
			[][]string{{"run"}, {"doctor"}}},
	}
	for _, tc := range cases {
		for _, cmd := range tc.cmds {
			t.Run(tc.name+"/"+strings.Join(append([]string{"bot"}, cmd...), " "), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				writeFile(t, dir, "config.yaml", tc.yaml+"http: {listen: \"\"}\n")
				r := runOnce(t, dir, baseEnv(dir), "hello\n", cmd...)
				if r.code != exitConfig {
					t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitConfig, r.stdout, r.stderr)
				}
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				if len(lines) != 1 || strings.Count(r.stderr, tc.want) != 1 {
					t.Errorf("stderr = %q; want one line, saying %q once", r.stderr, tc.want)
				}
				if _, err := os.Stat(filepath.Join(dir, "gatehouse.db")); !os.IsNotExist(err) {
					t.Errorf("the store was created despite the configuration error (stat: %v)", err)
				}
			})
		}
	}
}

// TestRelativePathsFromConfigDir: run from another directory, the shipped
// configuration's relative store.dsn and tools.workspace land beside the
// configuration file, not in the working directory.
func TestRelativePathsFromConfigDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc", "gatehouse")
	cwd := filepath.Join(dir, "elsewhere")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, etc, "config.yaml", offlineConfig(t))
	writeFile(t, etc, "workspace/notes.txt", "beside the config 7\n")
	for _, cfg := range []string{filepath.Join(etc, "config.yaml"), "../etc/gatehouse/config.yaml"} {
		r := runOnce(t, cwd, baseEnv(dir), "read notes.txt\n", "-config", cfg)
		if r.code != exitOK || !strings.Contains(r.stdout, "beside the config 7") {
			t.Fatalf("bot -config %s: exit %d; want 0 and the workspace beside the config\nstdout:\n%s\nstderr:\n%s", cfg, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(etc, "gatehouse.db")); err != nil {
		t.Errorf("no database beside the config: %v", err)
	}
	if left, _ := os.ReadDir(cwd); len(left) != 0 {
		t.Errorf("the bot wrote into the working directory: %v", left)
	}
}

// freeAddr returns a loopback address nothing listens on (it did a moment
// ago; the port is left for the caller).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// listenConfig is the shipped config.yaml with http.listen set to addr.
func listenConfig(t *testing.T, addr string) string {
	t.Helper()
	cfg := defaultConfig(t)
	const listen = "listen: 127.0.0.1:9090"
	if !strings.Contains(cfg, listen) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", listen)
	}
	return strings.Replace(cfg, listen, "listen: "+addr, 1)
}

// TestListenInUseFails: an http.listen address that cannot be bound stops
// the bot with exit 1, naming the address; it is not a warning to run past.
func TestListenInUseFails(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", listenConfig(t, ln.Addr().String()))
	r := runOnce(t, dir, baseEnv(dir), "what time is it\n", "run")
	if r.code != exitFail || !strings.Contains(r.stderr, "http.listen "+ln.Addr().String()) {
		t.Fatalf("exit %d; want %d naming http.listen %s\nstdout:\n%s\nstderr:\n%s", r.code, exitFail, ln.Addr(), r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "The time is") {
		t.Errorf("the bot answered although it could not bind http.listen:\n%s", r.stdout)
	}
}

// TestHealthcheck: `bot healthcheck` exits 0 against a running bot's
// http.listen, also when it listens on 0.0.0.0, and 1 when nothing
// listens there or http.listen is empty.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, port, _ := net.SplitHostPort(freeAddr(t))
			writeFile(t, dir, "config.yaml", listenConfig(t, net.JoinHostPort(host, port)))
			if r := runOnce(t, dir, baseEnv(dir), "", "healthcheck"); r.code != exitFail {
				t.Fatalf("healthcheck with no bot: exit %d; want %d\n%s%s", r.code, exitFail, r.stdout, r.stderr)
			}
			p := startBot(t, dir, baseEnv(dir))
			p.send("what time is it")
			expectLine(t, p, "The time is")
			var last result
			testutil.WaitFor(t, "bot healthcheck to pass", func() bool {
				last = runOnce(t, dir, baseEnv(dir), "", "healthcheck")
				return last.code == exitOK
			})
			if !strings.Contains(last.stdout, "/healthz") {
				t.Errorf("healthcheck stdout = %q; want the URL it checked", last.stdout)
			}
			p.closeInput()
			if code := p.wait(); code != 0 {
				t.Fatalf("bot exit %d; want 0", code)
			}
			if r := runOnce(t, dir, baseEnv(dir), "", "healthcheck"); r.code != exitFail {
				t.Errorf("healthcheck after the bot stopped: exit %d; want %d", r.code, exitFail)
			}
		})
	}
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	if r := runOnce(t, dir, baseEnv(dir), "", "healthcheck"); r.code != exitFail || !strings.Contains(r.stderr, "http.listen is empty") {
		t.Errorf("healthcheck with http.listen empty: exit %d, stderr %q; want %d saying so", r.code, r.stderr, exitFail)
	}
}

// TestAuditWithoutDatabase: before the first run there is no database:
// `bot audit` says so and exits 0, creating nothing.
func TestAuditWithoutDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	r := runOnce(t, dir, baseEnv(dir), "", "audit")
	if r.code != exitOK || !strings.Contains(r.stdout, "no database at "+filepath.Join(dir, "gatehouse.db")+" yet") {
		t.Fatalf("bot audit: exit %d; want 0 saying there is no database yet\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("bot audit created files: %v", left)
	}
}

// TestAuditJSONWithoutDatabase: `bot audit -json` (and -usage -json)
// before the first run prints an empty JSON array a script can parse, and
// says why on stderr; it printed the sentence on stdout, which no JSON
// parser takes.
func TestAuditJSONWithoutDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	for _, args := range [][]string{{"audit", "-json"}, {"audit", "-usage", "-json"}} {
		r := runOnce(t, dir, baseEnv(dir), "", args...)
		var got []any
		if err := json.Unmarshal([]byte(r.stdout), &got); r.code != exitOK || err != nil || len(got) != 0 {
			t.Errorf("bot %v: exit %d, stdout %q (%v); want 0 and an empty JSON array\nstderr:\n%s", args, r.code, r.stdout, err, r.stderr)
		}
		if !strings.Contains(r.stderr, "no database at "+filepath.Join(dir, "gatehouse.db")+" yet") {
			t.Errorf("bot %v: stderr %q does not say there is no database yet", args, r.stderr)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("bot audit created files: %v", left)
	}
}

// TestAuditBadStatus: an unknown -status is a usage error naming the valid
// statuses.
func TestAuditBadStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	r := runOnce(t, dir, baseEnv(dir), "", "audit", "-status", "bogus")
	if r.code != exitConfig {
		t.Fatalf("exit %d; want %d\nstderr:\n%s", r.code, exitConfig, r.stderr)
	}
	for _, want := range []string{"bogus", "executed", "denied", "interrupted"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not name %q", r.stderr, want)
		}
	}
}

// TestRootWarning: running as root draws one warning saying why it
// matters; an unprivileged user gets none. Each half runs where the tests
// can: the unprivileged one as nobody when the tests run as root.
func TestRootWarning(t *testing.T) {
	t.Parallel()
	const warning = "running as root"
	run := func(t *testing.T, cred *syscall.Credential) string {
		dir, err := os.MkdirTemp("", "gatehouse-root-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "config.yaml", offlineConfig(t))
		cmd := exec.Command(botBin, "run")
		cmd.Dir, cmd.Env = dir, baseEnv(dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
		cmd.Stdin = strings.NewReader("what time is it\n")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "The time is") {
			t.Fatalf("bot run: %v\n%s", err, out)
		}
		return string(out)
	}
	if os.Geteuid() != 0 {
		if out := run(t, nil); strings.Contains(out, warning) {
			t.Errorf("an unprivileged bot warned about root:\n%s", out)
		}
		return
	}
	out := run(t, nil)
	if strings.Count(out, warning) != 1 || !strings.Contains(out, "unprivileged user") {
		t.Errorf("a root bot's output has %d root warnings; want 1 saying what to do:\n%s", strings.Count(out, warning), out)
	}
	// The binary's directory must be reachable for nobody.
	if err := os.Chmod(filepath.Dir(botBin), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := run(t, &syscall.Credential{Uid: 65534, Gid: 65534}); strings.Contains(out, warning) {
		t.Errorf("a bot running as nobody warned about root:\n%s", out)
	}
}
