package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// The server receives the arguments exactly as checked and approved: a
// large integer is not rounded through float64 on the way.
func TestRunSendsTheArgumentsUnchanged(t *testing.T) {
	ctx := context.Background()
	ss := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	ss.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	cs := pipeSession(t, ss)
	srv := newServer(ServerConfig{Name: "echo"}, nopRegistrar{}, zerolog.Nop())
	srv.cs = cs
	tl, err := newTool(srv, &remoteTool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	const id = "12345678901234567891"
	args := json.RawMessage(`{"id":` + id + `}`)
	if err := tl.ValidateArgs(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	out, err := tl.Run(ctx, args)
	if err != nil || !strings.Contains(out, id) {
		t.Errorf("Run = %q, %v; want the id %s as sent", out, err, id)
	}
}

// pipeSession connects this client to the SDK's server ss over pipes (the
// stdio transport without a child) and initialises the session.
func pipeSession(t *testing.T, ss *sdk.Server) *clientSession {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	sess, err := ss.Connect(context.Background(), &sdk.IOTransport{Reader: toServer, Writer: fromServer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	c := newConn(zerolog.Nop(), nil)
	pipeStdio(c, toClient, fromClient)
	cs := &clientSession{c: c}
	t.Cleanup(func() { cs.Close() })
	if err := cs.initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return cs
}
