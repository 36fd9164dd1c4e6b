// Package manifest is the stored form of a checkpoint's files, shared by
// the store drivers: gzip-compressed JSON with short keys, so that a
// checkpoint of a large workspace is one small column.
package manifest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// nanos stores t as Unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos reverses nanos, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// manifestEntry is a CheckpointFile as stored: short keys, times as Unix
// nanoseconds. A path or link target that is not valid UTF-8 (a file
// name is any bytes) goes in PB or LB, as raw bytes: JSON would replace
// its invalid bytes with U+FFFD, and a restore would then remove the file
// and create it under another name.
type manifestEntry struct {
	P  string `json:"p"`
	PB []byte `json:"pb,omitempty"`
	K  string `json:"k,omitempty"` // "" is a file
	M  uint32 `json:"m"`
	S  int64  `json:"s,omitempty"`
	T  int64  `json:"t,omitempty"`
	C  int64  `json:"c,omitempty"`
	I  uint64 `json:"i,omitempty"`
	B  string `json:"b,omitempty"`
	L  string `json:"l,omitempty"`
	LB []byte `json:"lb,omitempty"`
}

// Encode is a checkpoint's files as stored: gzip-compressed JSON.
func Encode(files []record.CheckpointFile) ([]byte, error) {
	list := make([]manifestEntry, len(files))
	for i, f := range files {
		k := f.Kind
		if k == record.KindFile {
			k = ""
		}
		list[i] = manifestEntry{P: f.Path, K: k, M: f.Mode, S: f.Size, T: nanos(f.MTime), C: nanos(f.CTime),
			I: f.Inode, B: f.Blob, L: f.Target}
		if !utf8.ValidString(f.Path) {
			list[i].P, list[i].PB = "", []byte(f.Path)
		}
		if !utf8.ValidString(f.Target) {
			list[i].L, list[i].LB = "", []byte(f.Target)
		}
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if err := json.NewEncoder(zw).Encode(list); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reverses Encode.
func Decode(b []byte) ([]record.CheckpointFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var list []manifestEntry
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	out := make([]record.CheckpointFile, len(list))
	for i, e := range list {
		k := e.K
		if k == "" {
			k = record.KindFile
		}
		out[i] = record.CheckpointFile{Path: e.P, Kind: k, Mode: e.M, Size: e.S, MTime: fromNanos(e.T),
			CTime: fromNanos(e.C), Inode: e.I, Blob: e.B, Target: e.L}
		if e.PB != nil {
			out[i].Path = string(e.PB)
		}
		if e.LB != nil {
			out[i].Target = string(e.LB)
		}
	}
	return out, nil
}
