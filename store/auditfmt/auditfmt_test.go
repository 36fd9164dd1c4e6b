package auditfmt_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gatehouse-bot/gatehouse/store/auditfmt"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

func sample() []record.AuditEntry {
	at := time.Date(2026, 3, 1, 14, 5, 6, 0, time.FixedZone("CET", 3600))
	return []record.AuditEntry{
		{At: at, Conv: "slack:C1:T1", Tool: "shell", Args: `{"command":"rm -rf ./build"}`,
			RequestedBy: "slack:U1", ApprovedBy: "telegram:42", Outcome: "executed", Detail: "exit 0"},
		{At: at.Add(time.Minute), Conv: "console:local", Tool: "read_file",
			Args:        "{\"path\":\"x\\n\\u001b[31mred\"}",
			RequestedBy: "console:local", Outcome: "allowed"},
	}
}

func TestWriteAuditTable(t *testing.T) {
	var b bytes.Buffer
	if err := auditfmt.WriteAudit(&b, sample(), false); err != nil {
		t.Fatalf("WriteAudit: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("table has %d lines; want header + 2:\n%s", len(lines), b.String())
	}
	wantFields := [][]string{
		{"TIME (UTC)", "CONVERSATION", "TOOL", "ARGS", "REQUESTED BY", "APPROVED BY", "OUTCOME"},
		{"2026-03-01 13:05:06", "slack:C1:T1", "shell", "command=rm -rf ./build", "slack:U1", "telegram:42", "executed"},
		{"2026-03-01 13:06:06", "console:local", "read_file", "path=x [31mred", "console:local", "-", "allowed"},
	}
	for i, want := range wantFields {
		for _, f := range want {
			if !strings.Contains(lines[i], f) {
				t.Errorf("line %d = %q; want it to contain %q", i, lines[i], f)
			}
		}
	}
	if strings.ContainsRune(b.String(), '\x1b') {
		t.Error("table carries an escape character from the arguments")
	}
}

// TestWriteAuditTableBidi: a bidi control in a model's arguments (U+202E
// reverses what follows on a terminal that applies it) does not reach the
// table, where it would make a command read as another.
func TestWriteAuditTableBidi(t *testing.T) {
	e := sample()[0]
	e.Args = "{\"command\":\"rm -rf ./build \u202e\u2066#) tsil\"}"
	e.Conv = "slack:C1:\u2067T1"
	var b bytes.Buffer
	if err := auditfmt.WriteAudit(&b, []record.AuditEntry{e}, false); err != nil {
		t.Fatalf("WriteAudit: %v", err)
	}
	if strings.ContainsFunc(b.String(), func(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }) {
		t.Errorf("table carries a bidi control from the entry:\n%q", b.String())
	}
}

func TestWriteAuditJSON(t *testing.T) {
	var b bytes.Buffer
	if err := auditfmt.WriteAudit(&b, sample(), true); err != nil {
		t.Fatalf("WriteAudit: %v", err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, b.String())
	}
	if len(got) != 2 {
		t.Fatalf("got %d entries; want 2", len(got))
	}
	want := map[string]any{
		"at": "2026-03-01T13:05:06Z", "conversation": "slack:C1:T1", "tool": "shell",
		"args": `{"command":"rm -rf ./build"}`, "requested_by": "slack:U1",
		"approved_by": "telegram:42", "outcome": "executed", "detail": "exit 0",
	}
	if len(got[0]) != len(want) {
		t.Errorf("fields = %v; want exactly %v", got[0], want)
	}
	for k, v := range want {
		if got[0][k] != v {
			t.Errorf("%s = %v; want %v", k, got[0][k], v)
		}
	}
	if got[1]["args"] != sample()[1].Args {
		t.Errorf("args = %q; want the raw text %q", got[1]["args"], sample()[1].Args)
	}
}

func TestWriteAuditEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := auditfmt.WriteAudit(&b, nil, true); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Fatalf("empty JSON = %q, %v; want []", b.String(), err)
	}
	b.Reset()
	if err := auditfmt.WriteAudit(&b, nil, false); err != nil || strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("empty table = %q, %v; want the header only", b.String(), err)
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		args string
		max  int
		want string
	}{
		{`{"command":"ls -la"}`, 40, "command=ls -la"},
		{`{"b":2,"a":"x y","c":{"d": [1, 2]}}`, 40, `a=x y b=2 c={"d":[1,2]}`},
		{`{}`, 40, ""},
		{`["not", "an object"]`, 40, `["not", "an object"]`},
		{"not json\n\tat all", 40, "not json at all"},
		{`{"command":"echo 0123456789abcdef"}`, 20, "command=echo 012345…"},
		{`{"t":"ääääääääää"}`, 6, "t=äää…"},
		{`{"x":"a\u0007b\r\nc"}`, 40, "x=a b c"},
	}
	for _, tt := range tests {
		if got := auditfmt.Summary(tt.args, tt.max); got != tt.want {
			t.Errorf("Summary(%q, %d) = %q; want %q", tt.args, tt.max, got, tt.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"24h", 24 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"7d", 7 * 24 * time.Hour, true},
		{" 1d12h ", 36 * time.Hour, true},
		{"0h", 0, false},
		{"-1h", 0, false},
		{"-2d", 0, false},
		{"d", 0, false},
		{"1.5d", 0, false},
		{"7days", 0, false},
		{"99999999d", 0, false},
		{"", 0, false},
		{"yesterday", 0, false},
	}
	for _, tt := range tests {
		got, err := auditfmt.ParseSince(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSince(%q) = %v, %v; want %v (ok=%v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestWriteAuditInstance: entries written on a shared store name their
// instance, in the table (an INSTANCE column, "-" for an entry without
// one) and in the JSON ("instance", left out when none is recorded).
func TestWriteAuditInstance(t *testing.T) {
	entries := sample()
	entries[0].Instance = "host-a"
	var b bytes.Buffer
	if err := auditfmt.WriteAudit(&b, entries, false); err != nil {
		t.Fatalf("WriteAudit: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "INSTANCE") ||
		!strings.HasSuffix(lines[1], " host-a") || !strings.HasSuffix(lines[2], " -") {
		t.Errorf("table does not name the instance of each entry (INSTANCE; host-a, then -):\n%s", b.String())
	}
	b.Reset()
	if err := auditfmt.WriteAudit(&b, entries, true); err != nil {
		t.Fatalf("WriteAudit: %v", err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got) != 2 {
		t.Fatalf("output is not a JSON array of two: %v\n%s", err, b.String())
	}
	if got[0]["instance"] != "host-a" {
		t.Errorf("instance = %v; want host-a", got[0]["instance"])
	}
	if v, ok := got[1]["instance"]; ok {
		t.Errorf("instance of an entry without one = %v; want it left out", v)
	}
}
