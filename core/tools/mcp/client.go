package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// protocolVersion is the MCP version this client asks for; a server may
// answer with any of supportedVersions.
const protocolVersion = "2025-06-18"

var supportedVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// clientSession is an initialised MCP session: the calls this client
// makes, over a conn.
type clientSession struct {
	c *conn
}

// remoteTool is a tool as a server lists it.
type remoteTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations *struct {
		ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
	} `json:"annotations,omitempty"`
	// Execution.TaskSupport "required": the tool runs only as a task
	// (MCP 2025-11-25), which this client does not speak.
	Execution *struct {
		TaskSupport string `json:"taskSupport,omitempty"`
	} `json:"execution,omitempty"`
}

// listToolsResult is one page of tools/list.
type listToolsResult struct {
	Tools      []*remoteTool `json:"tools"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// callToolResult is the result of tools/call.
type callToolResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// content is one part of a tool's result: its Type says which fields
// it holds.
type content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"` // base64: image, audio
	MIMEType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"` // resource_link
	Size     *int64            `json:"size,omitempty"`
	Resource *resourceContents `json:"resource,omitempty"`
}

// resourceContents is an embedded resource: text or a base64 blob.
type resourceContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     string  `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// initialize runs the handshake: initialize, then
// notifications/initialized, under the version agreed (which an HTTP
// transport sends with every request after).
func (s *clientSession) initialize(ctx context.Context) error {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	err := s.c.call(ctx, "initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    struct{}{}, // no roots, sampling or elicitation
		"clientInfo":      map[string]string{"name": "gatehouse", "version": "1"},
	}, &res)
	if err != nil {
		return err
	}
	if !slices.Contains(supportedVersions, res.ProtocolVersion) {
		return fmt.Errorf("initialize: the server speaks protocol version %q, which this client does not", tools.Truncate(res.ProtocolVersion, 40))
	}
	if h, ok := s.c.t.(*httpTransport); ok {
		h.mu.Lock()
		h.version = res.ProtocolVersion
		h.mu.Unlock()
	}
	return s.c.notify(ctx, "notifications/initialized", struct{}{})
}

// listTools reads one page of the server's tools.
func (s *clientSession) listTools(ctx context.Context, cursor string) (*listToolsResult, error) {
	params := map[string]string{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	var res listToolsResult
	if err := s.c.call(ctx, "tools/list", params, &res); err != nil {
		return nil, err
	}
	res.Tools = slices.DeleteFunc(res.Tools, func(t *remoteTool) bool { return t == nil })
	return &res, nil
}

// callTool calls a tool with its arguments as they are.
func (s *clientSession) callTool(ctx context.Context, name string, args json.RawMessage) (*callToolResult, error) {
	var res callToolResult
	if err := s.c.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ping pings the server.
func (s *clientSession) ping(ctx context.Context) error {
	return s.c.call(ctx, "ping", struct{}{}, nil)
}

// isMethodNotFound reports whether err is the server's "method not found".
func isMethodNotFound(err error) bool {
	var rerr *rpcError
	return errors.As(err, &rerr) && rerr.Code == codeMethodNotFound
}

// Close ends the session (see conn.close).
func (s *clientSession) Close() error { return s.c.close() }

// Wait returns once the session ended.
func (s *clientSession) Wait() error { return s.c.wait() }
