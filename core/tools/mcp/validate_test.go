package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// recursiveOneOf is a schema whose validation doubles at each level of
// the value: both branches of the oneOf go down into "next".
const recursiveOneOf = `{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"$defs":{"node":{"oneOf":[
	{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}},
	{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}},"required":["last"]}]}}}`

// nested is {"n":{"next":{"next":…}}} with depth "next"s.
func nested(depth int) string {
	return `{"n":` + strings.Repeat(`{"next":`, depth) + `{}` + strings.Repeat(`}`, depth) + `}`
}

func recursiveTool(t *testing.T) (*tools.Registry, *tool) {
	t.Helper()
	var input any
	if err := json.Unmarshal([]byte(recursiveOneOf), &input); err != nil {
		t.Fatal(err)
	}
	offered, schema, err := convertSchema(input)
	if err != nil {
		t.Fatalf("a schema recursing into the value refused: %v", err)
	}
	tl := &tool{schema: schema, spec: tools.Spec{Name: "mcp__srv__deep", Description: "d", Parameters: offered}}
	r := tools.NewRegistry(tools.Options{Log: zerolog.Nop()})
	if err := r.Register(tl); err != nil {
		t.Fatal(err)
	}
	return r, tl
}

// TestDeepArgumentsAreRefusedBeforeValidation: validating a call's
// arguments against a recursive oneOf took time exponential in their
// nesting (depth 20: 12 s; 26: over a minute of a full core), and
// /cancel did not stop it. The value's depth is bounded first, then the
// validator's work (a step budget, counted by a walk that stops at the
// budget), under a context.
func TestDeepArgumentsAreRefusedBeforeValidation(t *testing.T) {
	r, tl := recursiveTool(t)
	if err := r.CheckArgs(context.Background(), tl.spec.Name, nested(3)); err != nil {
		t.Errorf("a shallow value refused: %v", err)
	}
	err := r.CheckArgs(context.Background(), tl.spec.Name, nested(18))
	if !errors.Is(err, tools.ErrInvalidArgs) || !errors.Is(err, errTooMuchWork) || !strings.Contains(err.Error(), "steps") {
		t.Errorf("depth 18: CheckArgs = %v, want the work refused", err)
	}
	err = r.CheckArgs(context.Background(), tl.spec.Name, nested(MaxArgsDepth+5))
	if !errors.Is(err, tools.ErrInvalidArgs) || !errors.Is(err, errTooDeep) || !strings.Contains(err.Error(), "levels") {
		t.Errorf("depth %d: CheckArgs = %v, want the depth refused", MaxArgsDepth+5, err)
	}
}

// TestCancelledValidationStops: the walk that bounds the validator's
// work stops when its context ends.
func TestCancelledValidationStops(t *testing.T) {
	_, tl := recursiveTool(t)
	var v any
	if err := json.Unmarshal([]byte(nested(12)), &v); err != nil {
		t.Fatal(err)
	}
	steps, err := tl.schema.cost(context.Background(), v)
	if err != nil || steps <= 2*checkEvery {
		t.Fatalf("cost = %d, %v; want a walk of more than %d steps", steps, err, 2*checkEvery)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	steps, err = tl.schema.cost(ctx, v)
	if !errors.Is(err, context.Canceled) || steps > checkEvery {
		t.Errorf("cancelled: cost = %d, %v; want context.Canceled within %d steps", steps, err, checkEvery)
	}
	if err := tl.schema.validate(ctx, v); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: validate = %v", err)
	}
}

// TestCheckArgsStopsWithTheTurn: the Registry hands the turn's context
// to the server's validator, so /cancel (or shutdown) stops a costly
// validation; before, it ran under a context of its own.
func TestCheckArgsStopsWithTheTurn(t *testing.T) {
	r, tl := recursiveTool(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.CheckArgs(ctx, tl.spec.Name, nested(12))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("CheckArgs under a cancelled turn = %v, want context.Canceled", err)
	}
	if err := r.CheckArgs(context.Background(), tl.spec.Name, nested(12)); err != nil {
		t.Errorf("CheckArgs of the same value in a live turn = %v", err)
	}
}
