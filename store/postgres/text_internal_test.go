package postgres

import (
	"reflect"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

func TestStorableArgs(t *testing.T) {
	s := "a\x00b"
	args := []any{"plain", s, &s, []string{"x", "\xff"}, core.Identity("u\x00"), []byte("\x00"), int64(1), nil, (*string)(nil)}
	want := []any{"plain", `a\x00b`, `a\x00b`, []string{"x", `\xff`}, `u\x00`, []byte("\x00"), int64(1), nil, (*string)(nil)}
	got := storableArgs(args)
	if p, ok := got[2].(*string); ok {
		got[2] = *p
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("storableArgs = %q\nwant %q", got, want)
	}
	if s != "a\x00b" || args[1] != "a\x00b" {
		t.Fatalf("storableArgs changed its arguments: %q", args)
	}
	clean := []any{"plain", int64(1)}
	if got := storableArgs(clean); &got[0] != &clean[0] {
		t.Fatalf("storableArgs copied arguments that needed nothing")
	}
}
