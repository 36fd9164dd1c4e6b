package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestParseInstances(t *testing.T) {
	for in, want := range map[string][]int{"": nil, "1,2,3": {1, 2, 3}, " 2 , 8": {2, 8}} {
		got, err := parseInstances(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseInstances(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "9", "1,,2", "x", "1;2", "-1"} {
		if got, err := parseInstances(in); err == nil {
			t.Errorf("parseInstances(%q) = %v; want an error", in, got)
		}
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h:5432/db?sslmode=disable": "postgres://u:p@h:5432/bench?sslmode=disable",
		"host=/tmp port=5433 dbname=postgres":      "host=/tmp port=5433 dbname=postgres dbname=bench",
	} {
		if got, err := withDatabase(in, "bench"); err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestInstancesFlag: a bad -instances list is a usage error naming the
// flag, before anything is built or started.
func TestInstancesFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-instances", "0"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-instances") {
		t.Errorf("-instances 0: exit %d, stderr %q; want %d naming -instances", code, stderr.String(), exitUsage)
	}
}
