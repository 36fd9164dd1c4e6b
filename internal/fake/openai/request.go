package openai

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Request is one recorded chat completions request.
type Request struct {
	Model        string
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
	MaxTokens    int  // max_tokens or max_completion_tokens
	Messages     []Message
	Tools        []Tool
	// BodySize is the request body's length in bytes.
	BodySize int
	// Body is the request body as received.
	Body []byte
	// Authorization is the Authorization header as received.
	Authorization string
}

// Message is one message of a recorded request.
type Message struct {
	Role       string
	Content    string
	Name       string
	ToolCallID string
	ToolCalls  []Call
	// Images are the message's image parts, decoded from their data:
	// URLs (an image given by another kind of URL has only URL set).
	Images []Image
}

// Image is one image part of a recorded message.
type Image struct {
	// MediaType is the data: URL's media type, e.g. "image/png".
	MediaType string
	// Data is the decoded bytes.
	Data []byte
	// URL is the part's URL as sent, when it is not a base64 data: URL.
	URL string
}

// Tool is one tool offered in a recorded request.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// LastUser returns the content of the last user message, or "".
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// HasTool reports whether a tool with the name was offered.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// The request as sent on the wire.
type wireRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []wireCall      `json:"tool_calls"`
}

type wireCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func decodeRequest(body []byte) (Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, err
	}
	req := Request{
		Model:     w.Model,
		Stream:    w.Stream,
		MaxTokens: max(w.MaxTokens, w.MaxCompletionTokens),
		Messages:  make([]Message, len(w.Messages)),
		BodySize:  len(body),
		Body:      body,
	}
	req.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	for i, m := range w.Messages {
		req.Messages[i] = Message{Role: m.Role, Content: contentText(m.Content), Name: m.Name, ToolCallID: m.ToolCallID,
			Images: contentImages(m.Content)}
		for _, c := range m.ToolCalls {
			req.Messages[i].ToolCalls = append(req.Messages[i].ToolCalls,
				Call{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
		}
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req, nil
}

// contentText reads a message content: a string, null, or an array of
// parts whose text parts are joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []wirePart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// wirePart is one part of a message content given as an array.
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// contentImages returns a content array's image_url parts, a base64 data:
// URL decoded.
func contentImages(raw json.RawMessage) []Image {
	var parts []wirePart
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []Image
	for _, p := range parts {
		if p.Type != "image_url" || p.ImageURL == nil {
			continue
		}
		out = append(out, decodeDataURL(p.ImageURL.URL))
	}
	return out
}

// decodeDataURL decodes "data:<type>;base64,<data>"; any other URL is
// kept as it is.
func decodeDataURL(u string) Image {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return Image{URL: u}
	}
	meta, data, ok := strings.Cut(rest, ",")
	mediaType, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 {
		return Image{URL: u}
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{URL: u}
	}
	return Image{MediaType: mediaType, Data: b}
}
