package config

import "testing"

// TestLimitDefaults: llm.max_tool_calls and engine.max_message default to
// 16 and 16 KiB and can be set.
func TestLimitDefaults(t *testing.T) {
	c := mustParse(t, "hitl: {approvers: [console:local]}\n", noEnv)
	if c.LLM.MaxToolCalls != 16 || c.Engine.MaxMessage != 16384 {
		t.Errorf("defaults: max_tool_calls %d, max_message %d; want 16, 16384", c.LLM.MaxToolCalls, c.Engine.MaxMessage)
	}
	c = mustParse(t, "llm: {max_tool_calls: 3}\nengine: {max_message: 100}\nhitl: {approvers: [console:local]}\n", noEnv)
	if c.LLM.MaxToolCalls != 3 || c.Engine.MaxMessage != 100 {
		t.Errorf("set: max_tool_calls %d, max_message %d; want 3, 100", c.LLM.MaxToolCalls, c.Engine.MaxMessage)
	}
}
