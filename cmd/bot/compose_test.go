package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// composeCommand is the Compose command on this machine: the docker
// plugin (docker compose), else the standalone docker-compose; nil when
// neither is installed.
func composeCommand() []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if path, err := exec.LookPath("docker-compose"); err == nil {
		return []string{path}
	}
	return nil
}

// TestComposeFileIsValid: `docker compose config -q` accepts
// deploy/compose.yaml with the variables of deploy/example.env (no
// Docker engine is needed to check it), and refuses it, naming the
// variable, when POSTGRES_PASSWORD is not set. Skipped, with one line,
// when no Compose command is installed.
func TestComposeFileIsValid(t *testing.T) {
	t.Parallel()
	compose := composeCommand()
	if compose == nil {
		t.Skip("skipped: neither `docker compose` nor `docker-compose` is installed (Debian: apt-get install docker-compose)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "deploy", "compose.yaml")
	run := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(compose[0], append(append(compose[1:], "-f", file), args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	path := "PATH=" + os.Getenv("PATH")
	if out, err := run([]string{path}, "--env-file", filepath.Join(root, "deploy", "example.env"), "config", "-q"); err != nil {
		t.Fatalf("%s config -q: %v\n%s", strings.Join(compose, " "), err, out)
	}
	// An empty env file: the variables come from nowhere.
	empty := filepath.Join(t.TempDir(), "empty.env")
	writeFile(t, filepath.Dir(empty), "empty.env", "")
	if out, err := run([]string{path}, "--env-file", empty, "config", "-q"); err == nil || !strings.Contains(out, "POSTGRES_PASSWORD") {
		t.Errorf("config without POSTGRES_PASSWORD: %v; want a refusal naming it\n%s", err, out)
	}
}

// TestDeployConfigIsValid: deploy/config.yaml, with deploy/example.env's
// variables (a token of the right shape) and a real database, passes
// `bot doctor` (the workspace, /data/workspace in the container, is a
// temporary directory here).
func TestDeployConfigIsValid(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	cfg := readFile(t, filepath.Join("..", "..", "deploy", "config.yaml"))
	if !strings.Contains(cfg, "  workspace: /data/workspace ") {
		t.Fatal("deploy/config.yaml no longer has its workspace on /data/workspace; update this test")
	}
	cfg = strings.Replace(cfg, "/data/workspace", filepath.Join(dir, "ws"), 1)
	writeFile(t, dir, "config.yaml", cfg)
	env := baseEnv(dir, exampleEnv(t)...)
	env = append(env, "TELEGRAM_BOT_TOKEN=123456789:AAHdeploy-test-token-0123456789abcd",
		"GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=gatehouse-a")
	r := runOnce(t, dir, env, "", "doctor")
	if r.code != exitOK || !strings.Contains(r.stdout, "store     postgres ") {
		t.Fatalf("bot doctor on deploy/config.yaml: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// exampleEnv is deploy/example.env's VAR=value lines.
func exampleEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	sc := bufio.NewScanner(strings.NewReader(readFile(t, filepath.Join("..", "..", "deploy", "example.env"))))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			env = append(env, line)
		}
	}
	return env
}

// TestComposeReplicasHaveTheirOwnNames: no gatehouse service of
// deploy/compose.yaml fixes GATEHOUSE_INSTANCE, which every replica of
// the service (`docker compose up --scale`) would share, and
// deploy/config.yaml's store.instance is empty when it is unset: each
// process is named hostname-pid, its container's own. (The services set
// gatehouse-a and gatehouse-b: two replicas of one would have run under
// one name.)
func TestComposeReplicasHaveTheirOwnNames(t *testing.T) {
	t.Parallel()
	var compose struct {
		Services map[string]struct {
			Image       string         `yaml:"image"`
			Environment map[string]any `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join("..", "..", "deploy", "compose.yaml"))), &compose); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	bots := 0
	for name, s := range compose.Services {
		if s.Image != "gatehouse:local" {
			continue
		}
		bots++
		if v, ok := s.Environment["GATEHOUSE_INSTANCE"]; ok {
			t.Errorf("service %s sets GATEHOUSE_INSTANCE=%v: every replica of it would run under that one name", name, v)
		}
	}
	if bots < 2 {
		t.Fatalf("deploy/compose.yaml has %d gatehouse services; want the two of the docs (update this test)", bots)
	}
	if cfg := readFile(t, filepath.Join("..", "..", "deploy", "config.yaml")); !strings.Contains(cfg, "  instance: ${GATEHOUSE_INSTANCE:-}\n") {
		t.Error("deploy/config.yaml's store.instance is not ${GATEHOUSE_INSTANCE:-} (empty when unset: hostname-pid)")
	}
}
