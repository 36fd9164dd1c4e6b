package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// setsWebhook matches a line that sets a field named Webhook: in a
// composite literal or by assignment.
var setsWebhook = regexp.MustCompile(`\bWebhook:\s|\.Webhook\s*=[^=]`)

// webhookSection matches a field Webhook set to a struct literal (a
// gateway's webhook settings, telegram's), which is no Signal's.
var webhookSection = regexp.MustCompile(`\bWebhook:\s+[\w.]+\{`)

// TestOnlyWebhooksSetsSignalWebhook: core.Signal.Webhook admits a message
// without an allow list (its verified signature is its admission), so only
// webhooks may set it; a gateway never does.
func TestOnlyWebhooksSetsSignalWebhook(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root || filepath.ToSlash(rel) == "webhooks" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if code, _, _ := strings.Cut(line, "//"); setsWebhook.MatchString(code) && !webhookSection.MatchString(code) {
				t.Errorf("%s:%d sets Webhook outside webhooks: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
