package llm

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	openai "github.com/sashabaranov/go-openai"
)

// toOpenAIMessages converts the history. The API refuses an assistant
// message with neither text nor calls, so those are left out, and a tool
// message without content, so an empty result is sent as "(no output)".
// With vision, a user message's images follow its text as image parts
// (data: URLs); without, they are left out (the text names the files).
func toOpenAIMessages(msgs []Message, vision bool) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 {
			continue
		}
		om := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
		if m.Role == RoleTool && m.Content == "" {
			om.Content = "(no output)"
		}
		if len(m.ToolCalls) > 0 {
			om.ToolCalls = toOpenAIToolCalls(m.ToolCalls)
		}
		if vision && m.Role == RoleUser && len(m.Images) > 0 {
			om.MultiContent = imageParts(m.Content, m.Images)
			om.Content = ""
		}
		out = append(out, om)
	}
	return out
}

// imageParts is a user message's text followed by its images.
func imageParts(text string, images []Image) []openai.ChatMessagePart {
	parts := make([]openai.ChatMessagePart, 0, len(images)+1)
	if text != "" {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text})
	}
	for _, img := range images {
		parts = append(parts, openai.ChatMessagePart{
			Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{
				URL:    "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data),
				Detail: openai.ImageURLDetailAuto,
			},
		})
	}
	return parts
}

func toOpenAIToolCalls(calls []ToolCall) []openai.ToolCall {
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = openai.ToolCall{
			ID:       c.ID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Args},
		}
	}
	return out
}

// fromOpenAIMessage converts an answer. Calls without an id (some local
// servers omit it) get "call_<n>" so that tool results can refer to them.
func fromOpenAIMessage(m openai.ChatCompletionMessage) Message {
	out := Message{Role: RoleAssistant, Content: m.Content}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = ToolCall{ID: callID(c.ID, i), Name: c.Function.Name, Args: c.Function.Arguments}
		}
	}
	return out
}

func callID(id string, i int) string {
	if id != "" {
		return id
	}
	return "call_" + strconv.Itoa(i)
}

// toolCache keeps the conversion of the last specs slice seen. Catalogs
// hand out one shared, unmodified slice (core.ToolCatalog.Specs), so its
// identity (first element and length) is a cheap, safe key.
type toolCache struct {
	first *ToolSpec
	n     int
	tools []openai.Tool
}

// toolsFor converts specs, reusing the previous conversion for the same
// slice. The schemas are passed through as json.RawMessage, never parsed.
func (p *OpenAI) toolsFor(specs []ToolSpec) []openai.Tool {
	if len(specs) == 0 {
		return nil
	}
	if c := p.tools.Load(); c != nil && c.first == &specs[0] && c.n == len(specs) {
		return c.tools
	}
	tools := make([]openai.Tool, len(specs))
	for i, s := range specs {
		params := json.RawMessage(s.Parameters)
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		tools[i] = openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        s.Name,
				Description: s.Description,
				Parameters:  params,
			},
		}
	}
	p.tools.Store(&toolCache{first: &specs[0], n: len(specs), tools: tools})
	return tools
}
