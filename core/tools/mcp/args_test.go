package mcp

import (
	"context"
	"encoding/json"
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
	ct, st := sdk.NewInMemoryTransports()
	sess, err := ss.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	srv := newServer(ServerConfig{Name: "echo"}, nopRegistrar{}, zerolog.Nop())
	srv.cs = cs
	tl, err := newTool(srv, &sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)})
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
