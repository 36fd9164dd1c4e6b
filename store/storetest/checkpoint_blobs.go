package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// CheckpointBlobContract tests a store.CheckpointBlobStore on the store's
// clock: a blob put is read back byte for byte (a zero byte, a NUL and
// invalid UTF-8 included), and an empty content, nil included, as a
// blob of size 0; of many concurrent puts of one content exactly
// one adds it; a missing blob is record.ErrNotFound; the size is the sum
// of the contents; a collection deletes the blobs neither kept nor in use
// within idle, and a touch or a put marks a blob in use again; a touch
// returns only the stored blobs. newBlobs must make the store read its
// time from now.
func CheckpointBlobContract(t *testing.T, newBlobs func(t *testing.T, now func() time.Time) store.CheckpointBlobStore) {
	t.Helper()
	clock := NewClock(clusterEpoch)
	c := &blobContract{ctx: context.Background(), clock: clock, b: newBlobs(t, clock.Now),
		contents: map[string][]byte{"aa": []byte("first\x00\xff\xfe"), "bb": []byte("second"), "cc": {}}}
	runSteps(t,
		contractStep{"put_once_concurrently", c.putOnceConcurrently},
		contractStep{"read_back", c.readBack},
		contractStep{"touch", c.touch},
		contractStep{"collect", c.collectIdle},
		contractStep{"empty_blob", func(t *testing.T) { emptyBlob(t, c.b, c.clock) }}, // b is empty again
	)
}

// blobContract is the state CheckpointBlobContract's steps share.
type blobContract struct {
	ctx      context.Context
	clock    *Clock
	b        store.CheckpointBlobStore
	contents map[string][]byte
}

// putOnceConcurrently: of 20 concurrent puts of one content exactly one
// adds it; then the other contents are put.
func (c *blobContract) putOnceConcurrently(t *testing.T) {
	var added atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := c.b.PutCheckpointBlob(c.ctx, "aa", c.contents["aa"])
			if err != nil {
				errs <- err
			}
			if ok {
				added.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("PutCheckpointBlob: %v", err)
	}
	if n := added.Load(); n != 1 {
		t.Fatalf("20 concurrent puts of one blob: %d added, want exactly 1", n)
	}
	for _, sum := range []string{"bb", "cc"} {
		if ok, err := c.b.PutCheckpointBlob(c.ctx, sum, c.contents[sum]); err != nil || !ok {
			t.Fatalf("PutCheckpointBlob(%q) = %v, %v; want added", sum, ok, err)
		}
	}
}

// readBack: each blob reads back byte for byte, a missing one is
// record.ErrNotFound, and the size is the sum of the contents.
func (c *blobContract) readBack(t *testing.T) {
	for sum, want := range c.contents {
		got, err := c.b.CheckpointBlob(c.ctx, sum)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("CheckpointBlob(%q) = %q, %v; want %q", sum, got, err, want)
		}
	}
	if _, err := c.b.CheckpointBlob(c.ctx, "dd"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("CheckpointBlob of a missing blob: %v; want record.ErrNotFound", err)
	}
	c.size(t, int64(len(c.contents["aa"])+len(c.contents["bb"])))
}

// touch returns only the stored blobs.
func (c *blobContract) touch(t *testing.T) {
	got, err := c.b.TouchCheckpointBlobs(c.ctx, []string{"aa", "dd", "cc"})
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"aa", "cc"}) {
		t.Fatalf("TouchCheckpointBlobs(aa, dd, cc) = %q, %v; want aa, cc", got, err)
	}
}

// collectIdle: a collection deletes the blobs neither kept nor in use
// within idle, and a touch or a put marks a blob in use again.
func (c *blobContract) collectIdle(t *testing.T) {
	const idle = 10 * time.Minute
	c.collect(t, nil, idle, 0) // all in use within idle
	c.clock.Set(clusterEpoch.Add(idle + time.Second))
	if _, err := c.b.TouchCheckpointBlobs(c.ctx, []string{"bb"}); err != nil {
		t.Fatal(err)
	}
	c.collect(t, []string{"aa"}, idle, 1) // cc: neither kept nor in use; bb touched
	if _, err := c.b.CheckpointBlob(c.ctx, "cc"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a collected blob: %v; want record.ErrNotFound", err)
	}
	c.size(t, int64(len(c.contents["aa"])+len(c.contents["bb"])))
	c.clock.Set(clusterEpoch.Add(2*idle + 2*time.Second))
	if ok, err := c.b.PutCheckpointBlob(c.ctx, "aa", c.contents["aa"]); err != nil || ok {
		t.Fatalf("PutCheckpointBlob of a stored blob = %v, %v; want not added", ok, err)
	}
	c.collect(t, nil, idle, 1) // bb; aa is in use again through its put
	c.clock.Set(clusterEpoch.Add(2*idle + 3*time.Second))
	c.collect(t, nil, 0, 1) // aa, with no idle time
	c.size(t, 0)
}

// size checks the blobs' total size.
func (c *blobContract) size(t *testing.T, want int64) {
	t.Helper()
	if n, err := c.b.CheckpointBlobsSize(c.ctx); err != nil || n != want {
		t.Fatalf("CheckpointBlobsSize = %d, %v; want %d", n, err, want)
	}
}

// collect checks that a collection keeping keep, with idle, deletes want
// blobs.
func (c *blobContract) collect(t *testing.T, keep []string, idle time.Duration, want int64) {
	t.Helper()
	if n, err := c.b.CollectCheckpointBlobs(c.ctx, keep, idle); err != nil || n != want {
		t.Fatalf("at %v: CollectCheckpointBlobs(%q, %v) = %d, %v; want %d", c.clock.Now().Sub(clusterEpoch), keep, idle, n, err, want)
	}
}

// emptyBlob checks that an empty file's blob, which comes as nil (the
// bytes of an empty bytes.Buffer), is stored as a blob of size 0 as any
// other empty content. b must hold no blob.
func emptyBlob(t *testing.T, b store.CheckpointBlobStore, clock *Clock) {
	t.Helper()
	ctx := context.Background()
	if ok, err := b.PutCheckpointBlob(ctx, "ee", nil); err != nil || !ok {
		t.Fatalf("PutCheckpointBlob(ee, nil) = %v, %v; want added", ok, err)
	}
	if got, err := b.CheckpointBlob(ctx, "ee"); err != nil || len(got) != 0 {
		t.Fatalf("CheckpointBlob of a nil content = %q, %v; want empty", got, err)
	}
	if n, err := b.CheckpointBlobsSize(ctx); err != nil || n != 0 {
		t.Fatalf("CheckpointBlobsSize with an empty blob = %d, %v; want 0", n, err)
	}
	clock.Set(clock.Now().Add(time.Second))
	if n, err := b.CollectCheckpointBlobs(ctx, nil, 0); err != nil || n != 1 {
		t.Fatalf("CollectCheckpointBlobs of the empty blob = %d, %v; want 1", n, err)
	}
}
