package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var fixedNow = func() time.Time { return time.Date(2025, 3, 4, 9, 30, 0, 0, time.UTC) }

func TestCurrentTime(t *testing.T) {
	tool := NewCurrentTime(fixedNow)
	tests := []struct{ args, want string }{
		{`{}`, "2025-03-04T09:30:00Z Tuesday UTC"},
		{`{"timezone":""}`, "2025-03-04T09:30:00Z Tuesday UTC"},
		{`{"timezone":"Europe/Berlin"}`, "2025-03-04T10:30:00+01:00 Tuesday Europe/Berlin"},
		{`{"timezone":"Pacific/Kiritimati"}`, "2025-03-04T23:30:00+14:00 Tuesday Pacific/Kiritimati"},
	}
	for _, tt := range tests {
		out, err := tool.Run(context.Background(), json.RawMessage(tt.args))
		if err != nil || out != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.args, out, err, tt.want)
		}
	}
	if _, err := tool.Run(context.Background(), json.RawMessage(`{"timezone":"Mars/Olympus"}`)); !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("unknown zone: %v", err)
	}
}

func TestRegisterBuiltins(t *testing.T) {
	r := NewRegistry(Options{Log: zerolog.Nop()})
	if err := RegisterBuiltins(r, BuiltinOptions{Workspace: t.TempDir() + "/ws", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		readOnly bool
		timeout  time.Duration
	}{
		"current_time": {true, DefaultTimeout}, "http_get": {true, HTTPTimeout}, "list_dir": {true, DefaultTimeout},
		"read_file": {true, DefaultTimeout}, "send_file": {true, sendFileTimeout}, "shell": {false, ShellTimeout}, "write_file": {false, DefaultTimeout},
	}
	size := 0
	for _, s := range r.Specs() {
		w, ok := want[s.Name]
		spec, _ := r.Spec(s.Name)
		if !ok || spec.ReadOnly != w.readOnly || spec.Timeout != w.timeout {
			t.Errorf("%s: read-only %v timeout %v", s.Name, spec.ReadOnly, spec.Timeout)
		}
		size += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	if len(r.Specs()) != len(want) {
		t.Errorf("%d tools, want %d", len(r.Specs()), len(want))
	}
	t.Logf("built-in specs: %d bytes", size)
	if err := RegisterBuiltins(r, BuiltinOptions{Workspace: t.TempDir()}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("second registration: %v", err)
	}
}

func BenchmarkRunCurrentTime(b *testing.B) {
	r := NewRegistry(Options{Log: zerolog.Nop()})
	if err := r.Register(NewCurrentTime(nil)); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	args := json.RawMessage(`{}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(ctx, "current_time", args); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCurrentTimeNamesTheLocalZone(t *testing.T) {
	local := func() time.Time { return time.Date(2025, 3, 4, 10, 30, 0, 0, time.Local) }
	out, err := NewCurrentTime(local).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	zone, _ := local().Zone()
	if strings.Contains(out, "Local") || !strings.HasSuffix(out, " "+zone) {
		t.Fatalf("output %q, want it to end with the zone abbreviation %q", out, zone)
	}
}
