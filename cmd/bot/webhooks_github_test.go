package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/webhooks"
)

// githubExamples fetches GitHub's example payloads (the
// @octokit/webhooks-examples npm package) into a temporary directory and
// returns them by event name, each as its raw JSON. It skips, saying so,
// without npm or when the package cannot be fetched.
func githubExamples(t *testing.T) map[string][]json.RawMessage {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm: the test fetches GitHub's example payloads (@octokit/webhooks-examples) with it")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--silent", "@octokit/webhooks-examples@7")
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".npm"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm could not fetch @octokit/webhooks-examples: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "@octokit", "webhooks-examples", "api.github.com", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var events []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	if err := json.Unmarshal(raw, &events); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	out := map[string][]json.RawMessage{}
	for _, e := range events {
		out[e.Name] = e.Examples
	}
	return out
}

// example returns the first example of event whose action is action (of
// the repository repo, when not "").
func example(t *testing.T, all map[string][]json.RawMessage, event, action string, repo ...string) []byte {
	t.Helper()
	for _, raw := range all[event] {
		var p struct {
			Action     string `json:"action"`
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if json.Unmarshal(raw, &p) == nil && p.Action == action && (len(repo) == 0 || p.Repository.FullName == repo[0]) {
			return raw
		}
	}
	t.Fatalf("no %s %s example", event, action)
	return nil
}

// deliverGitHub posts body as GitHub does: X-GitHub-Event, X-GitHub-Delivery
// and X-Hub-Signature-256 over the body with secret; it returns the status.
func deliverGitHub(t *testing.T, url, event, id, secret string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/test")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(webhooks.Sign(secret, body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGitHubWebhookExamples is issue 31 with GitHub's own example
// payloads, signed as GitHub signs them: pull_request and workflow_run
// deliveries are accepted and threaded per pull request and per run; a
// redelivery starts nothing; one byte changed is refused 401; an event not
// in events is answered 2xx and ignored.
func TestGitHubWebhookExamples(t *testing.T) {
	all := githubExamples(t)
	b := startWebhookBot(t, `  - name: github
    format: github
    secret: ${HOOK_TOKEN}
    conversation: slack:C0DEV
    prompt: Review what changed.
    events: [pull_request, workflow_run]
`)
	url := "http://" + b.listen + "/hooks/github"
	// The examples' pull request is Codertocat/Hello-World#2; their run
	// requested and completed is octo-org/octo-repo's 289782451.
	deliveries := []struct{ event, action, repo, id string }{
		{"pull_request", "opened", "Codertocat/Hello-World", "d-pr-1"},
		{"workflow_run", "requested", "octo-org/octo-repo", "d-run-1"},
		{"pull_request", "synchronize", "Codertocat/Hello-World", "d-pr-2"},
		{"workflow_run", "completed", "octo-org/octo-repo", "d-run-2"},
	}
	for i, d := range deliveries {
		if got := deliverGitHub(t, url, d.event, d.id, hookSecret, example(t, all, d.event, d.action, d.repo)); got != http.StatusAccepted {
			t.Fatalf("%s %s: %d; want 202", d.event, d.action, got)
		}
		testutil.WaitFor(t, d.event+" "+d.action+"'s reply", func() bool {
			_, replies := b.threads("C0DEV")
			n := 0
			for _, r := range replies {
				n += len(r)
			}
			return n == i+1
		})
	}
	opened := example(t, all, "pull_request", "opened")
	if got := deliverGitHub(t, url, "pull_request", "d-pr-1", hookSecret, opened); got != http.StatusOK {
		t.Errorf("redelivery: %d; want 200", got)
	}
	changed := bytes.Clone(opened)
	changed[bytes.IndexByte(changed, '"')+1] ^= 0x20
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(changed))
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "d-changed")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(webhooks.Sign(hookSecret, opened)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("one byte changed: %d; want 401", resp.StatusCode)
	}
	if got := deliverGitHub(t, url, "issues", "d-issue-1", hookSecret, example(t, all, "issues", "opened")); got/100 != 2 {
		t.Errorf("an event not in events: %d; want 2xx", got)
	}
	// A last delivery, answered after the ones before it: nothing they
	// started is still to come.
	if got := deliverGitHub(t, url, "pull_request", "d-pr-3", hookSecret, example(t, all, "pull_request", "closed")); got != http.StatusAccepted {
		t.Fatalf("closed: %d", got)
	}
	testutil.WaitFor(t, "the last reply", func() bool {
		parents, replies := b.threads("C0DEV")
		return len(parents) == 2 && len(replies[parents[0].TS])+len(replies[parents[1].TS]) == 5
	})
	parents, replies := b.threads("C0DEV")
	byTitle := map[string]int{}
	for _, p := range parents {
		switch {
		case strings.Contains(p.Text, "pull_request opened"):
			byTitle["pr"] = len(replies[p.TS])
		case strings.Contains(p.Text, "workflow_run requested"):
			byTitle["run"] = len(replies[p.TS])
		default:
			t.Errorf("unexpected thread %q", p.Text)
		}
	}
	if byTitle["pr"] != 3 || byTitle["run"] != 2 {
		t.Errorf("replies per thread %v; want pr 3 (opened, synchronize, closed), run 2 (requested, completed)", byTitle)
	}
	if n := len(b.model.Requests()); n != 5 {
		t.Errorf("model requests %d; want 5 (the redelivery, the changed byte and the issue started nothing)", n)
	}
}
