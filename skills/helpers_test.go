package skills

import (
	"errors"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

func llmCall(name, args string) llm.ToolCall { return llm.ToolCall{ID: "c1", Name: name, Args: args} }

func errString(s string) error { return errors.New(s) }
