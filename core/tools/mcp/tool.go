package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// maxDescription caps a tool's description as offered to the model.
const maxDescription = 1024

// tool is one tool of a server as registered in the Registry.
type tool struct {
	srv    *server
	remote string // the tool's name on the server
	spec   tools.Spec
	schema *argSchema
}

var (
	_ tools.Tool          = (*tool)(nil)
	_ tools.ArgsValidator = (*tool)(nil)
)

// errTaskOnly is newTool's error for a tool that must be called as a task:
// a plain call is refused by the server, so the model is never offered it.
var errTaskOnly = errors.New("it runs only as a task (execution.taskSupport \"required\"), which this client does not call")

// newTool converts a tool the server listed.
func newTool(srv *server, t *remoteTool) (*tool, error) {
	if t.Execution != nil && t.Execution.TaskSupport == "required" {
		return nil, errTaskOnly
	}
	params, schema, err := convertSchema(t.InputSchema)
	if err != nil {
		return nil, err
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	// What a server says of its tools goes to the model in every request:
	// redacted like its results, before it is cut.
	desc = tools.Truncate(srv.secrets.Redact(fmt.Sprintf("[MCP server %s, tool %s] %s", srv.cfg.Name, t.Name, desc)), maxDescription)
	if params, err = redactSchema(params, srv.secrets); err != nil {
		return nil, err
	}
	return &tool{
		srv:    srv,
		remote: t.Name,
		schema: schema,
		spec: tools.Spec{
			Name:        ToolName(srv.cfg.Name, t.Name),
			Description: desc,
			Parameters:  params,
			// The checkpoint before a call keys on this; the policy does
			// not: an MCP tool no rule allows is held whatever it says.
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
			Timeout:  srv.cfg.timeout(),
		},
	}, nil
}

// logLeftOut logs a tool of the server left out, its name cut.
func (s *server) logLeftOut(name string, err error) {
	ev := s.log.Warn()
	if errors.Is(err, errTaskOnly) { // the server's design, not its fault
		ev = s.log.Info()
	}
	ev.Str("tool", tools.Truncate(name, 64)).Str("error", tools.Truncate(err.Error(), maxErrorText)).Msg("mcp tool left out")
}

// Spec implements tools.Tool.
func (t *tool) Spec() tools.Spec { return t.spec }

// ValidateArgs checks the arguments against the server's own schema,
// within MaxArgsDepth and MaxValidationSteps, and stops when ctx ends (the
// turn's context: /cancel, shutdown).
func (t *tool) ValidateArgs(ctx context.Context, args json.RawMessage) error {
	v, err := decodeArgs(args)
	if err != nil {
		return err
	}
	return t.schema.validate(ctx, v)
}

// errToolError is wrapped by the error of a call whose result was marked
// isError by the server.
var errToolError = errors.New("the tool reported an error")

// Run implements tools.Tool: it calls the tool on the server's current
// session. ctx ending (timeout, /cancel, shutdown) cancels the call on the
// server (notifications/cancelled).
func (t *tool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	cs := t.srv.current()
	if cs == nil {
		return "", fmt.Errorf("mcp %s: the server is not running (it is being restarted)", t.srv.cfg.Name)
	}
	// The arguments go as they were checked and approved: decoding them
	// into a map would round a large integer through float64.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return "", fmt.Errorf("%w: %w", tools.ErrInvalidArgs, err)
	}
	res, err := t.call(ctx, cs, args)
	if errors.Is(err, errSessionRefused) && ctx.Err() == nil {
		// The call never ran: a person's approval is not wasted on a
		// server that was restarted. Once more, on a new session.
		t.srv.log.Info().Str("tool", t.remote).Msg("mcp call refused with its session; sent again on a new session")
		if cs, err = t.srv.replace(ctx, cs); err == nil {
			res, err = t.call(ctx, cs, args)
		}
	}
	if err != nil {
		return "", fmt.Errorf("mcp %s: call %s: %w", t.srv.cfg.Name, t.remote, err)
	}
	out := renderResult(res)
	if res.IsError {
		return out, fmt.Errorf("mcp %s: %s: %w", t.srv.cfg.Name, t.remote, errToolError)
	}
	return out, nil
}

// errSessionRefused is wrapped by the error of a call the server refused
// for its session: it never ran.
var errSessionRefused = errors.New("the server refused the session")

// call calls the tool on cs. Only a call whose request the server refused
// for its session (see noteRefusal) fails with errSessionRefused: never
// one that may have run (a timeout, a 5xx, a lost connection, a tool
// error).
func (t *tool) call(ctx context.Context, cs *clientSession, args json.RawMessage) (*callToolResult, error) {
	pctx, probe := withProbe(ctx)
	res, err := cs.callTool(pctx, t.remote, args)
	if err != nil && probe.refused.Load() {
		return nil, fmt.Errorf("%w: %w", errSessionRefused, err)
	}
	return res, err
}

// redactSchema removes secrets from every string of an offered schema,
// names of properties included (and so the required list's), so that
// the schema stays consistent. It works on the decoded strings: in the
// JSON text a secret holding '"', '&' or '<' is escaped, not itself.
func redactSchema(params json.RawMessage, sec *secrets.Set) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(params, &v); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return sec.Redact(v)
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[sec.Redact(k)] = walk(x)
			}
			return out
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return out, nil
}
