package console_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestAttachSendsALocalFile: "/attach PATH -- caption" becomes one signal
// with the caption as text and the file as an attachment that fetches its
// bytes (within max); a missing path or a directory is answered and sends
// nothing.
func TestAttachSendsALocalFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shot one.png")
	data := []byte("\x89PNG\r\n\x1a\nbytes")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	input := "/attach " + path + " -- what is this?\n/attach " + filepath.Join(dir, "missing.txt") + "\n/attach " + dir + "\n/attach\n/attachment is a word\n"
	out := &testutil.SyncBuffer{}
	c := console.New(strings.NewReader(input), out, false)
	in := make(inbox, 10)
	if err := c.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	close(in)
	var sigs []core.Signal
	for s := range in {
		sigs = append(sigs, s)
	}
	if len(sigs) != 2 || sigs[1].Text != "/attachment is a word" || len(sigs[1].Attachments) != 0 {
		t.Fatalf("signals %+v, want the attachment and the plain line", sigs)
	}
	s := sigs[0]
	if s.Text != "what is this?" || len(s.Attachments) != 1 {
		t.Fatalf("signal %+v", s)
	}
	a := s.Attachments[0]
	if a.Name != "shot one.png" || a.MediaType != "image/png" || a.Kind != core.AttachImage || a.Size != int64(len(data)) {
		t.Errorf("attachment %+v", a)
	}
	var got bytes.Buffer
	if err := a.Fetcher.Fetch(context.Background(), &got, 100); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Errorf("fetched %q, %v", got.Bytes(), err)
	}
	if err := a.Fetcher.Fetch(context.Background(), &bytes.Buffer{}, 4); !errors.Is(err, core.ErrTooBig) {
		t.Errorf("over max: %v, want ErrTooBig", err)
	}
	text := out.String()
	for _, want := range []string{"cannot attach " + filepath.Join(dir, "missing.txt"), "is not a regular file", "usage: /attach PATH"} {
		if !strings.Contains(text, want) {
			t.Errorf("output %q lacks %q", text, want)
		}
	}
}
