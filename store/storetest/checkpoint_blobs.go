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
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	b := newBlobs(t, clock.Now)
	contents := map[string][]byte{"aa": []byte("first\x00\xff\xfe"), "bb": []byte("second"), "cc": {}}

	var added atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := b.PutCheckpointBlob(ctx, "aa", contents["aa"])
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
		if ok, err := b.PutCheckpointBlob(ctx, sum, contents[sum]); err != nil || !ok {
			t.Fatalf("PutCheckpointBlob(%q) = %v, %v; want added", sum, ok, err)
		}
	}
	for sum, want := range contents {
		got, err := b.CheckpointBlob(ctx, sum)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("CheckpointBlob(%q) = %q, %v; want %q", sum, got, err, want)
		}
	}
	if _, err := b.CheckpointBlob(ctx, "dd"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("CheckpointBlob of a missing blob: %v; want record.ErrNotFound", err)
	}
	size := func(want int64) {
		t.Helper()
		if n, err := b.CheckpointBlobsSize(ctx); err != nil || n != want {
			t.Fatalf("CheckpointBlobsSize = %d, %v; want %d", n, err, want)
		}
	}
	size(int64(len(contents["aa"]) + len(contents["bb"])))

	got, err := b.TouchCheckpointBlobs(ctx, []string{"aa", "dd", "cc"})
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"aa", "cc"}) {
		t.Fatalf("TouchCheckpointBlobs(aa, dd, cc) = %q, %v; want aa, cc", got, err)
	}

	collect := func(keep []string, idle time.Duration, want int64) {
		t.Helper()
		if n, err := b.CollectCheckpointBlobs(ctx, keep, idle); err != nil || n != want {
			t.Fatalf("at %v: CollectCheckpointBlobs(%q, %v) = %d, %v; want %d", clock.Now().Sub(clusterEpoch), keep, idle, n, err, want)
		}
	}
	const idle = 10 * time.Minute
	collect(nil, idle, 0) // all in use within idle
	clock.Set(clusterEpoch.Add(idle + time.Second))
	if _, err := b.TouchCheckpointBlobs(ctx, []string{"bb"}); err != nil {
		t.Fatal(err)
	}
	collect([]string{"aa"}, idle, 1) // cc: neither kept nor in use; bb touched
	if _, err := b.CheckpointBlob(ctx, "cc"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("a collected blob: %v; want record.ErrNotFound", err)
	}
	size(int64(len(contents["aa"]) + len(contents["bb"])))
	clock.Set(clusterEpoch.Add(2*idle + 2*time.Second))
	if ok, err := b.PutCheckpointBlob(ctx, "aa", contents["aa"]); err != nil || ok {
		t.Fatalf("PutCheckpointBlob of a stored blob = %v, %v; want not added", ok, err)
	}
	collect(nil, idle, 1) // bb; aa is in use again through its put
	clock.Set(clusterEpoch.Add(2*idle + 3*time.Second))
	collect(nil, 0, 1) // aa, with no idle time
	size(0)
	emptyBlob(t, b, clock) // b is empty again
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
