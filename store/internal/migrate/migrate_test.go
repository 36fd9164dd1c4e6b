package migrate

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLatest(t *testing.T) {
	file := &fstest.MapFile{Data: []byte("-- +goose Up\n")}
	for _, tt := range []struct {
		files map[string]*fstest.MapFile
		want  int
		err   string
	}{
		{map[string]*fstest.MapFile{"0001_a.sql": file, "0002_b.sql": file}, 2, ""},
		{map[string]*fstest.MapFile{"0001_a.sql": file, "0003_c.sql": file}, 0, "want version 2"},
		{map[string]*fstest.MapFile{"0001_a.sql": file, "notes.txt": file}, 0, "want NNNN_name.sql"},
	} {
		got, err := Latest(fstest.MapFS(tt.files))
		if got != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Latest(%v) = %d, %v; want %d, %q", tt.files, got, err, tt.want, tt.err)
		}
	}
}
