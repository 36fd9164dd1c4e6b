package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// BenchmarkCheckpoint10000FilesOneChanged: a workspace of 10,000 files
// (100 directories of 100 files of 1 KiB) with one file changed before
// each checkpoint. The unchanged files cost a stat each, never a hash or
// a copy: each checkpoint copies exactly one blob. It reports the time
// per checkpoint, the blobs and bytes copied per checkpoint, and the
// first (full) checkpoint's figures for comparison.
func BenchmarkCheckpoint10000FilesOneChanged(b *testing.B) {
	const dirs, perDir, size = 100, 100, 1024
	// The checkpoints' clock runs a minute ahead: the workspace was
	// written before, not within the racy window of the file system's
	// time stamps (where a file is hashed again, unchanged or not).
	f := newFixture(b, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(time.Minute) } })
	past := time.Now().Add(-time.Hour)
	for d := range dirs {
		dir := filepath.Join(f.ws, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range perDir {
			p := filepath.Join(dir, fmt.Sprintf("f%03d.txt", i))
			content := fmt.Appendf(nil, "%0*d", size, d*perDir+i)
			if err := os.WriteFile(p, content, 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, past, past); err != nil {
				b.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	act := core.Action{Kind: core.ActionTool, Conv: convA, From: "console:local", Call: llm.ToolCall{Name: "write_file", Args: "{}"}}
	start := time.Now()
	if note, release := f.m.Checkpoint(ctx, act); note != "" {
		b.Fatal(note)
	} else {
		release()
	}
	full := time.Since(start)
	first, err := f.db.LatestCheckpoint(ctx)
	if err != nil {
		b.Fatal(err)
	}
	changed := filepath.Join(f.ws, "d050", "f050.txt")
	var blobs, bytes int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		if err := os.WriteFile(changed, fmt.Appendf(nil, "%0*d", size, 1_000_000+i), 0o644); err != nil {
			b.Fatal(err)
		}
		before := f.m.Total()
		countBefore := countBlobs(b, f.m.o.Blobs)
		b.StartTimer()
		note, release := f.m.Checkpoint(ctx, act)
		release()
		b.StopTimer()
		if note != "" {
			b.Fatal(note)
		}
		blobs += int64(countBlobs(b, f.m.o.Blobs) - countBefore)
		bytes += f.m.Total() - before
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(blobs)/float64(b.N), "blobs-copied/op")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes-copied/op")
	if blobs != int64(b.N) {
		b.Fatalf("%d blobs copied in %d checkpoints with one file changed each, want one each", blobs, b.N)
	}
	b.Logf("10,000 files: first checkpoint %v, %d bytes copied; then per checkpoint with one file changed: %v, %.0f blob(s), %.0f bytes copied",
		full.Round(time.Millisecond), first.Added, (b.Elapsed() / time.Duration(b.N)).Round(time.Microsecond),
		float64(blobs)/float64(b.N), float64(bytes)/float64(b.N))
}

func countBlobs(b *testing.B, dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
