// Package mcp is a fake Model Context Protocol server for tests, built with
// the official SDK (github.com/modelcontextprotocol/go-sdk): NewServer gives
// the server, Handler serves it over Streamable HTTP, and the main package
// in cmd/fakemcp serves it over stdio (Build compiles it). Its tools:
//
//   - lookup (read-only): {"key"} → "value of <key>"
//   - env (read-only): {"name"} → the variable's value in the server's
//     environment, "(unset)" when unset
//   - write_note: {"path","text"}, path a plain file name → writes the
//     file in the workspace
//   - fail: a result marked isError
//   - hang: blocks until the call is cancelled
//   - grow: adds the tool "extra" (→ "extra here"), which sends
//     notifications/tools/list_changed
//   - many0000 on, Options.Many of them (→ "many <n>")
//   - churn (only with Options.Churn): {"n"} → adds the tools churn0 …
//     churn<n-1>, one every 20 ms (each change notified on its own:
//     notifications/tools/list_changed n times), then "added <n>"
//   - await (only with Options.Await): {"file"}, a plain file name → blocks
//     until that file exists in the workspace (a test releases it), then
//     "released by <file>"
//
// Every call is appended, one JSON line, to Options.CallLog when set, and
// a hang's or an await's cancellation as {"tool":…,"cancelled":true}.
//
// Importers alias it, e.g. fakemcp "github.com/…/internal/fake/mcp".
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the fake.
type Options struct {
	// Workspace is where write_note writes.
	Workspace string
	// CallLog, when set, is a file each call is appended to.
	CallLog string
	// Note, when set, ends lookup's description and describes its key,
	// as a server that tells the model its configuration would.
	Note string
	// Many adds that many tools, "many0000" on (→ "many <n>"), each
	// input schema padded with ManyPad bytes.
	Many, ManyPad int
	// PageSize is the most tools a tools/list page holds (0: the SDK's
	// default, 1000).
	PageSize int
	// EndlessPages makes every tools/list page name a next one, each page
	// holding a new tool, "page<n>", instead of the server's tools.
	EndlessPages bool
	// Lists, when set, counts the tools/list requests served.
	Lists *atomic.Int64
	// Await adds the tool await, which answers once a file appears in
	// Workspace.
	Await bool
	// Churn adds the tool churn, which adds tools one by one.
	Churn bool
}

// logMu serialises appends to a call log within this process.
var logMu sync.Mutex

func (o Options) record(v map[string]any) {
	if o.CallLog == "" {
		return
	}
	b, _ := json.Marshal(v)
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(o.CallLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// args decodes a call's arguments and records the call.
func (o Options) args(name string, req *sdk.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	o.record(map[string]any{"tool": name, "args": m})
	return m
}

// NewServer returns the fake server with its tools.
func NewServer(o Options) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "fakemcp", Version: "1"}, &sdk.ServerOptions{PageSize: o.PageSize})
	s.AddReceivingMiddleware(o.listMiddleware)
	o.addMany(s)
	o.addDataTools(s)
	o.addBehaviourTools(s)
	if o.Await {
		o.addAwait(s)
	}
	if o.Churn {
		addChurn(s)
	}
	return s
}

// awaitPoll is how often await looks for its file.
const awaitPoll = 10 * time.Millisecond

// addChurn adds the tool churn: {"n"} (at most 200) adds n tools, one
// every 20 ms, longer apart than the SDK gathers changes into one
// notification (10 ms), so that each is notified.
func addChurn(s *sdk.Server) {
	s.AddTool(&sdk.Tool{
		Name: "churn", Description: "Adds tools one by one.",
		InputSchema: schema(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":200}},"required":["n"]}`),
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ N int }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		for i := range min(a.N, 200) {
			s.AddTool(&sdk.Tool{
				Name: fmt.Sprintf("churn%d", i), Description: "Added by churn.",
				InputSchema: schema(`{"type":"object","properties":{}}`),
				Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
			}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("churned"), nil })
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		return text(fmt.Sprintf("added %d", a.N)), nil
	})
}

// addAwait adds the tool await: it answers once the file its call names
// exists in Options.Workspace, or ends with the call's cancellation.
func (o Options) addAwait(s *sdk.Server) {
	s.AddTool(&sdk.Tool{
		Name: "await", Description: "Answers once a file exists in the workspace.",
		InputSchema: schema(`{"type":"object","properties":{"file":{"type":"string","pattern":"^[A-Za-z0-9_.-]+$","maxLength":64}},"required":["file"],"additionalProperties":false}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := o.args("await", req)
		file, _ := m["file"].(string)
		path := filepath.Join(o.Workspace, filepath.Base(file))
		t := time.NewTicker(awaitPoll)
		defer t.Stop()
		for {
			if _, err := os.Stat(path); err == nil {
				return text("released by " + file), nil
			}
			select {
			case <-ctx.Done():
				o.record(map[string]any{"tool": "await", "cancelled": true})
				return nil, ctx.Err()
			case <-t.C:
			}
		}
	})
}

// addMany adds the Options.Many tools many0000, many0001, …, each
// schema padded by Options.ManyPad.
func (o Options) addMany(s *sdk.Server) {
	for i := range o.Many {
		name := fmt.Sprintf("many%04d", i)
		s.AddTool(&sdk.Tool{
			Name: name, Description: "Many tools, this one " + name + ".",
			InputSchema: schema(`{"type":"object","description":"` + strings.Repeat("x", o.ManyPad) + `","properties":{}}`),
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			o.args(name, req)
			return text(fmt.Sprintf("many %d", i)), nil
		})
	}
}

// addDataTools adds the tools that read and write: lookup (its
// description carrying Options.Note), env and write_note (into
// Options.Workspace).
func (o Options) addDataTools(s *sdk.Server) {
	note, _ := json.Marshal(o.Note)
	s.AddTool(&sdk.Tool{
		Name: "lookup", Description: "Looks a key up." + o.Note,
		InputSchema: schema(`{"type":"object","properties":{"key":{"type":"string","description":` + string(note) + `}},"required":["key"],"additionalProperties":false}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := o.args("lookup", req)
		return text(fmt.Sprintf("value of %v", m["key"])), nil
	})
	s.AddTool(&sdk.Tool{
		Name: "env", Description: "Reads an environment variable of the server.",
		InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := o.args("env", req)
		name, _ := m["name"].(string)
		v, ok := os.LookupEnv(name)
		if !ok {
			v = "(unset)"
		}
		return text(v), nil
	})
	s.AddTool(&sdk.Tool{
		Name: "write_note", Description: "Writes a note into the workspace.",
		InputSchema: schema(`{"type":"object","properties":{
			"path":{"type":"string","pattern":"^[A-Za-z0-9_.-]+$","maxLength":64},
			"text":{"type":"string"}},"required":["path","text"],"additionalProperties":false}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := o.args("write_note", req)
		path, _ := m["path"].(string)
		body, _ := m["text"].(string)
		if err := os.WriteFile(filepath.Join(o.Workspace, filepath.Base(path)), []byte(body), 0o600); err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
		}
		return text(fmt.Sprintf("wrote %d bytes to %s", len(body), path)), nil
	})
}

// addBehaviourTools adds the tools that misbehave or change the server:
// fail (always an error), hang (never answers until cancelled) and grow
// (adds the tool extra).
func (o Options) addBehaviourTools(s *sdk.Server) {
	s.AddTool(&sdk.Tool{
		Name: "fail", Description: "Always fails.",
		InputSchema: schema(`{"type":"object","properties":{}}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		o.args("fail", req)
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the fake failed on purpose"}}}, nil
	})
	s.AddTool(&sdk.Tool{
		Name: "hang", Description: "Never answers.",
		InputSchema: schema(`{"type":"object","properties":{}}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		o.args("hang", req)
		<-ctx.Done()
		o.record(map[string]any{"tool": "hang", "cancelled": true})
		return nil, ctx.Err()
	})
	s.AddTool(&sdk.Tool{
		Name: "grow", Description: "Adds the tool extra.",
		InputSchema: schema(`{"type":"object","properties":{}}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		o.args("grow", req)
		s.AddTool(&sdk.Tool{
			Name: "extra", Description: "Added by grow.",
			InputSchema: schema(`{"type":"object","properties":{}}`),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			o.args("extra", req)
			return text("extra here"), nil
		})
		return text("added extra"), nil
	})
}

// listMiddleware counts tools/list requests (Options.Lists) and answers
// them with endless pages (Options.EndlessPages).
func (o Options) listMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		lr, ok := req.(*sdk.ListToolsRequest)
		if !ok || method != "tools/list" {
			return next(ctx, method, req)
		}
		if o.Lists != nil {
			o.Lists.Add(1)
		}
		if !o.EndlessPages {
			return next(ctx, method, req)
		}
		page := 0
		if lr.Params != nil {
			page, _ = strconv.Atoi(strings.TrimPrefix(lr.Params.Cursor, "p"))
		}
		return &sdk.ListToolsResult{
			Tools: []*sdk.Tool{{
				Name: fmt.Sprintf("page%d", page), Description: "One of endless pages.",
				InputSchema: schema(`{"type":"object","properties":{}}`),
			}},
			NextCursor: fmt.Sprintf("p%d", page+1),
		}, nil
	}
}

// Handler serves one fake server over Streamable HTTP. When header is
// not empty, a request without that header value is refused (401).
func Handler(o Options, header, value string) http.Handler {
	srv := NewServer(o)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if header != "" && r.Header.Get(header) != value {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Build compiles the stdio fake (cmd/fakemcp) into dir and returns its
// path. Its environment: FAKE_MCP_WORKSPACE, FAKE_MCP_CALLS, FAKE_MCP_NOTE,
// FAKE_MCP_AWAIT (Options; any value sets Await), and
// FAKE_MCP_FAIL_START, which makes it exit 1 at once, saying its value on
// stderr.
func Build(dir string) (string, error) {
	out := filepath.Join(dir, "fakemcp")
	cmd := exec.Command(goTool(), "build", "-o", out, "github.com/gatehouse-bot/gatehouse/internal/fake/mcp/cmd/fakemcp")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fakemcp: %w\n%s", err, b)
	}
	return out, nil
}

// goTool is the go command of the toolchain that built the running test
// binary, falling back to the one on PATH.
func goTool() string {
	//nolint:staticcheck // runtime.GOROOT is exactly "the toolchain running these tests"
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}
