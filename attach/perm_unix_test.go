//go:build unix

package attach

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestSavedFilesArePrivate is issue 28 item 9: a received file is saved
// 0600 in directories made 0700 (the workspace too, when the receiver
// creates it), whatever the umask, and a copy of a file whose permission
// is known (the console's /attach) never gets one its original lacks.
func TestSavedFilesArePrivate(t *testing.T) {
	for _, umask := range []int{0o022, 0o000, 0o277} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			r, tmp, _ := newReceiver(t, nil)
			ws := filepath.Join(tmp, "new workspace")
			r.o.Workspace = ws
			for _, c := range []struct {
				name string
				perm fs.FileMode // the original's; 0: unknown
				want fs.FileMode
			}{
				{"from-a-platform.txt", 0, 0o600},
				{"was-0644.txt", 0o644, 0o600},
				{"was-0600.txt", 0o600, 0o600},
				{"was-0400.txt", 0o400, 0o400},
			} {
				got := r.Receive(context.Background(), signal(core.Attachment{Name: c.name, Kind: core.AttachDocument, Perm: c.perm,
					Fetcher: &bytesFetcher{data: []byte("private")}}))
				if len(got.Notes) != 0 {
					t.Fatalf("%s: notes %q", c.name, got.Notes)
				}
				info, err := os.Stat(filepath.Join(ws, "inbox/telegram--100/20261126T235901Z-"+c.name))
				if err != nil {
					t.Fatal(err)
				}
				if info.Mode().Perm() != c.want {
					t.Errorf("%s (original %v) saved %v; want %v", c.name, c.perm, info.Mode().Perm(), c.want)
				}
			}
			for _, d := range []string{"", "inbox", "inbox/telegram--100"} {
				info, err := os.Stat(filepath.Join(ws, d))
				if err != nil {
					t.Fatal(err)
				}
				if info.Mode().Perm() != 0o700 {
					t.Errorf("directory %q is %v; want -rwx------", d, info.Mode().Perm())
				}
			}
		})
	}
}
