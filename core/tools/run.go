package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Errors of a run. Act reports each as a failed Result for the LLM to read;
// none of them is returned as an error by Act.
var (
	// ErrUnknownTool: the LLM called a tool that is not registered.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalidArgs: the arguments are not a JSON object, name a key the
	// tool's schema does not declare (case counts) or give one twice, miss a
	// required field, or a field has the wrong JSON type.
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrTimeout: the tool ran past its timeout and was cancelled.
	ErrTimeout = errors.New("timed out")
	// ErrCrashed: the tool panicked; the registry logged the stack.
	ErrCrashed = errors.New("tool crashed")
	// ErrFailed is wrapped by a tool's error when its output already
	// explains the failure (a non-zero exit status): Act then reports the
	// output alone, marked failed.
	ErrFailed = errors.New("failed")
)

// killGrace is how long a run waits, past the tool's deadline, for the tool
// to stop and hand back its partial output. A tool that ignores its context
// is abandoned after it: its goroutine ends when the tool returns, and what
// it returns is discarded.
const killGrace = 2 * time.Second

// outcome is what one call of a tool returned.
type outcome struct {
	out string
	err error
}

// Run runs the named tool with its JSON arguments (empty or null mean {})
// under the tool's timeout. The output has secrets removed and is capped at
// MaxOutput; it may hold partial output when err is not nil. err wraps
// ErrUnknownTool, ErrInvalidArgs, ErrTimeout or ErrCrashed, the tool's own
// error, or the context's error when ctx ended first.
func (r *Registry) Run(ctx context.Context, name string, args json.RawMessage) (string, error) {
	out, err := r.run(ctx, "", name, args)
	return Truncate(out, r.opts.MaxOutput), err
}

// Act runs a.Call. Every failure of the call itself (unknown tool, bad
// arguments, tool error, crash, timeout) is a Result with Failed set and an
// "error: …" Output, and a nil error; only a ctx that ended, or an action
// that is not a tool call, gives an error.
func (r *Registry) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionTool {
		return core.Result{}, fmt.Errorf("tools: act: a %s action is not a tool call", a.Kind)
	}
	note, release := r.checkpoint(ctx, a)
	defer release()
	ctx = withConversation(ctx, a.Conv) // send_file's destination
	out, err := r.run(ctx, a.Conv.Key(), a.Call.Name, json.RawMessage(a.Call.Args))
	if err == nil {
		return core.Result{Output: r.withNote(note, out)}, nil
	}
	res := core.Result{Output: r.withNote(note, r.failure(out, err)), Failed: true}
	if ctx.Err() != nil {
		return res, fmt.Errorf("tools: act %s: %w", a.Call.Name, ctx.Err())
	}
	return res, nil
}

// failure renders a failed run for the LLM within MaxOutput: the output
// (cut first if needed), then the error.
func (r *Registry) failure(out string, err error) string {
	if errors.Is(err, ErrFailed) && out != "" {
		return Truncate(out, r.opts.MaxOutput)
	}
	msg := Truncate("error: "+r.opts.Secrets.Redact(err.Error()), r.opts.MaxOutput/2)
	if out == "" {
		return msg
	}
	return Truncate(out, r.opts.MaxOutput-len(msg)-1) + "\n" + msg
}

// CheckArgs checks a call's arguments against the named tool's schema
// exactly as Run does before running it: a JSON object (empty or null mean
// {}) whose keys are declared properties, case included, each given once,
// with every required one present and every declared type respected. The
// error wraps ErrUnknownTool or ErrInvalidArgs and names the argument, e.g.
// "unknown argument PATH; expected path". It is cheap: the schema was
// parsed at Register.
func (r *Registry) CheckArgs(ctx context.Context, name, args string) error {
	_, _, err := r.check(ctx, name, json.RawMessage(args))
	return err
}

// check finds the tool and validates its normalised arguments.
func (r *Registry) check(ctx context.Context, name string, args json.RawMessage) (*entry, json.RawMessage, error) {
	e := r.lookup(name)
	if e == nil {
		return nil, nil, fmt.Errorf("%w %q (available: %s)", ErrUnknownTool, name, r.names())
	}
	args = normalizeArgs(args)
	if err := e.args.validate(args); err != nil {
		return nil, nil, fmt.Errorf("%w for %s: %w", ErrInvalidArgs, name, err)
	}
	if v, ok := e.tool.(ArgsValidator); ok {
		if err := v.ValidateArgs(ctx, args); err != nil {
			return nil, nil, fmt.Errorf("%w for %s: %w", ErrInvalidArgs, name, err)
		}
	}
	return e, args, nil
}

// run is Run without the output cap; conv, when known, goes into the log.
func (r *Registry) run(ctx context.Context, conv, name string, args json.RawMessage) (string, error) {
	e, args, err := r.check(ctx, name, args)
	if err != nil {
		return "", err
	}
	start := time.Now()
	out, err := r.invoke(ctx, e, args)
	out = r.opts.Secrets.Redact(out)
	r.opts.Log.Debug().Str("conv", conv).Str("tool", name).Dur("took", time.Since(start)).
		Int("bytes", len(out)).Bool("failed", err != nil).Msg("tool run")
	return out, err
}

// invoke calls the tool under its timeout, in a goroutine so that a tool
// that ignores its context cannot hold the caller past the deadline.
func (r *Registry) invoke(ctx context.Context, e *entry, args json.RawMessage) (string, error) {
	tctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() { done <- r.call(tctx, e, args) }()
	select {
	case o := <-done:
		return r.finish(ctx, tctx, e, o)
	case <-tctx.Done():
	}
	grace := time.NewTimer(r.grace)
	defer grace.Stop()
	select {
	case o := <-done:
		return r.finish(ctx, tctx, e, o)
	case <-grace.C:
		r.opts.Log.Warn().Str("tool", e.spec.Name).Msg("tool ignored its deadline; abandoned")
		return r.finish(ctx, tctx, e, outcome{err: tctx.Err()})
	}
}

// finish names why a run failed when its context ended: the caller's ctx
// (shutdown) or the tool's own deadline. A tool that succeeded regardless
// keeps its result.
func (r *Registry) finish(parent, tctx context.Context, e *entry, o outcome) (string, error) {
	switch {
	case o.err == nil:
		return o.out, nil
	case parent.Err() != nil:
		return o.out, fmt.Errorf("%s: %w", e.spec.Name, stoppedError{parent.Err()})
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return o.out, fmt.Errorf("%w after %s", ErrTimeout, e.timeout)
	}
	return o.out, o.err
}

// stoppedError is a run cut short because its caller's context ended
// (/cancel, shutdown, the turn's own deadline). It says so in words — the
// text reaches people in an outcome's output block, where Go's "context
// canceled" said nothing — and unwraps to the context's error.
type stoppedError struct{ ctxErr error }

func (e stoppedError) Error() string {
	if errors.Is(e.ctxErr, context.DeadlineExceeded) {
		return "stopped before it finished: the time allowed ran out"
	}
	return "stopped before it finished"
}

func (e stoppedError) Unwrap() error { return e.ctxErr }

// call runs the tool, turning a panic into ErrCrashed.
func (r *Registry) call(ctx context.Context, e *entry, args json.RawMessage) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			r.opts.Log.Error().Str("tool", e.spec.Name).
				Str("panic", r.opts.Secrets.Redact(fmt.Sprint(p))).
				Str("stack", string(debug.Stack())).Msg("tool crashed")
			o = outcome{err: fmt.Errorf("%w: %v", ErrCrashed, p)}
		}
	}()
	out, err := e.tool.Run(ctx, args)
	return outcome{out: out, err: err}
}
