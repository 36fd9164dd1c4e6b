package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDotEnvBesideTheConfig: ${VAR} expands from the environment, then
// from the .env file beside the configuration (what bot init writes); a
// malformed .env is a configuration error naming its line and not its
// content; a .env other users may read draws a warning.
func TestDotEnvBesideTheConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := offlineConfig(t)
	writeFile(t, dir, "config.yaml", conf)
	envPath := filepath.Join(dir, ".env")
	if err := os.WriteFile(envPath, []byte("# written by a test\nOPENAI_API_KEY=sk-dotenv-test-0123456789\nOPENAI_MODEL=model-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitOK || !strings.Contains(r.stdout, "model model-from-file, api_key set") {
		t.Errorf("doctor with .env: exit %d; want the model and the key from .env:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a warning for a .env of mode 0600: %s", r.stderr)
	}
	r = runOnce(t, dir, baseEnv(dir, "OPENAI_MODEL=model-from-env"), "", "doctor")
	if !strings.Contains(r.stdout, "model model-from-env") {
		t.Errorf("the environment does not win over .env:\n%s", r.stdout)
	}

	if err := os.Chmod(envPath, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "doctor")
	if !strings.Contains(r.stderr, "readable by other users") {
		t.Errorf("no warning for a .env of mode 0644: %q", r.stderr)
	}

	if err := os.WriteFile(envPath, []byte("OPENAI_MODEL=x\nsk-a-pasted-secret-line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitConfig || !strings.Contains(r.stderr, ".env:2: want NAME=value") || strings.Contains(r.stderr, "sk-a-pasted") {
		t.Errorf("a malformed .env: exit %d, stderr %q; want %d naming .env:2 and not its content", r.code, r.stderr, exitConfig)
	}
}
