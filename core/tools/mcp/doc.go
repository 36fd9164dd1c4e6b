// Package mcp offers the tools of Model Context Protocol servers (stdio
// children or Streamable HTTP endpoints) as tools of a core/tools Registry,
// named "mcp__<server>__<tool>", so that the same policy, approvals, audit,
// checkpoints and secret redaction apply to them as to the built-in tools.
//
// A Manager starts every server in parallel, registers its tools when it is
// ready, refreshes them on notifications/tools/list_changed, withdraws them
// when the server dies (a Streamable HTTP server: stops answering its
// pings) and restarts it with backoff (1 s doubling to 1 min),
// and stops every child when its context ends. A call that a Streamable
// HTTP server refused for its session (it was restarted) never ran: it is
// sent once more on a new session, started at once. What a server sends
// is bounded: its tool list (MaxListPages, MaxTools, MaxToolBytes), its
// HTTP answers (MaxJSONBody, MaxSSEEvent), and the work of validating a
// call's arguments against its schemas (MaxArgsDepth,
// MaxValidationSteps); a stdio server's messages (one line each) are
// capped at MaxJSONBody too, and its lines that are not JSON-RPC are left
// out with a warning.
//
// The client is this package's own, for the size of the release: JSON-RPC
// 2.0 (jsonrpc.go) over a child's stdin and stdout (stdio.go) or
// Streamable HTTP (streamable.go, sse.go: POSTs answered as JSON or an SSE
// stream, the Mcp-Session-Id and MCP-Protocol-Version headers, the
// server's own GET stream when it has one), speaking initialize, tools/list,
// tools/call, ping and notifications/cancelled, answering the server's
// pings and refusing its other requests (no roots, sampling or
// elicitation), and offering no tool that runs only as a task. Arguments
// are validated by jsonschema.go against the server's schema (draft
// 2020-12 and draft-07's forms). The tests run it
// against the official Go SDK's server (internal/fake/mcp) and the
// reference servers from npm (reference_test.go).
package mcp
