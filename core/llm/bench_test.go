package llm_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// benchTools is a realistic tool set (the built-ins' shapes).
var benchTools = []llm.ToolSpec{
	{Name: "shell", Description: "Run a shell command in the workspace.", Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
	{Name: "current_time", Description: "The current date and time.", Parameters: []byte(`{"type":"object","properties":{"timezone":{"type":"string"}}}`)},
	{Name: "read_file", Description: "Read a workspace file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "list_dir", Description: "List a workspace directory.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "write_file", Description: "Write a workspace file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	{Name: "http_get", Description: "Fetch a URL.", Parameters: []byte(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`)},
}

// BenchmarkOpenAIComplete measures one completion of a one-line question
// through go-openai against the loopback fake (which does not record, so
// that its own work stays small). Allocations include the fake's and
// net/http's on both sides. "fresh-tools" passes a new tool slice each
// time, defeating the conversion cache.
func BenchmarkOpenAIComplete(b *testing.B) {
	cases := []struct {
		name   string
		stream bool
		tools  func() []llm.ToolSpec
	}{
		{"json/no-tools", false, func() []llm.ToolSpec { return nil }},
		{"json/tools", false, func() []llm.ToolSpec { return benchTools }},
		{"json/fresh-tools", false, func() []llm.ToolSpec { return slices.Clone(benchTools) }},
		{"stream/tools", true, func() []llm.ToolSpec { return benchTools }},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			srv := fakeopenai.Start(b)
			srv.Record(false)
			p := newOpenAI(b, srv.URL(), bc.stream)
			req := userReq("What is the capital of France?")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				req.Tools = bc.tools()
				if _, err := p.Complete(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(srv.BytesReceived())/float64(b.N), "reqB/op")
		})
	}
}

// BenchmarkDemoComplete measures the demo model on an intent.
func BenchmarkDemoComplete(b *testing.B) {
	d := llm.NewDemo()
	req := llm.Request{Messages: []llm.Message{user("what time is it")}, Tools: benchTools}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
