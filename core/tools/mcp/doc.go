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
// MaxValidationSteps). It is built on the official SDK,
// github.com/modelcontextprotocol/go-sdk.
package mcp
