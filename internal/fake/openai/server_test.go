package openai_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func post(t *testing.T, s *fakeopenai.Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func chatBody(user string, stream bool) string {
	return fmt.Sprintf(`{"model":"m","stream":%v,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":%q}],`+
		`"tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object"}}}]}`, stream, user)
}

type answer struct {
	Choices []struct {
		Message struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

func decode(t *testing.T, resp *http.Response) answer {
	t.Helper()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return a
}

func TestScriptThenDefault(t *testing.T) {
	s := fakeopenai.Start(t)
	s.Push(fakeopenai.Text("one"), fakeopenai.ToolCalls(
		fakeopenai.Call{ID: "a", Name: "shell", Args: `{"command":"ls"}`},
		fakeopenai.Call{ID: "b", Name: "shell", Args: `{"command":"pwd"}`}))
	if a := decode(t, post(t, s, chatBody("q1", false))); *a.Choices[0].Message.Content != "one" || a.Choices[0].FinishReason != "stop" || a.Usage.PromptTokens == 0 {
		t.Errorf("first answer = %+v", a)
	}
	a := decode(t, post(t, s, chatBody("q2", false)))
	calls := a.Choices[0].Message.ToolCalls
	if a.Choices[0].FinishReason != "tool_calls" || len(calls) != 2 || calls[1].Function.Arguments != `{"command":"pwd"}` || calls[0].Type != "function" {
		t.Errorf("second answer = %+v", a)
	}
	if a := decode(t, post(t, s, chatBody("q3", false))); *a.Choices[0].Message.Content != fakeopenai.DefaultAnswer {
		t.Errorf("default answer = %+v", a)
	}
	s.Respond(func(r fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("echo " + r.LastUser()) })
	if a := decode(t, post(t, s, chatBody("q4", false))); *a.Choices[0].Message.Content != "echo q4" {
		t.Errorf("responder answer = %+v", a)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].LastUser() != "q1" || !reqs[0].HasTool("shell") || reqs[0].Model != "m" {
		t.Errorf("requests = %+v", reqs)
	}
	reqs[0].Model = "changed"
	if s.Requests()[0].Model != "m" {
		t.Error("Requests does not return a copy")
	}
	var total int64
	for _, r := range s.Requests() {
		total += int64(r.BodySize)
	}
	if s.BytesReceived() != total || total == 0 {
		t.Errorf("BytesReceived = %d, want %d", s.BytesReceived(), total)
	}
}

// events reads an SSE body into its data payloads.
func events(t *testing.T, resp *http.Response) []string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

func TestStreamToolCalls(t *testing.T) {
	s := fakeopenai.Start(t)
	s.Push(fakeopenai.ToolCalls(
		fakeopenai.Call{ID: "a", Name: "shell", Args: `{"command":"ls -la"}`},
		fakeopenai.Call{ID: "b", Name: "shell", Args: `{"command":"pwd"}`}))
	evs := events(t, post(t, s, chatBody("q", true)))
	if evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("last event %q", evs[len(evs)-1])
	}
	args := map[int]string{}
	pieces, finish, usage := 0, "", false
	for _, e := range evs[:len(evs)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int
						Function struct{ Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
			Usage *struct{ TotalTokens int } `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		usage = usage || c.Usage != nil
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				if tc.Function.Arguments != "" {
					pieces++
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if args[0] != `{"command":"ls -la"}` || args[1] != `{"command":"pwd"}` || pieces < 4 || finish != "tool_calls" || !usage {
		t.Errorf("args %v in %d pieces, finish %q, usage %v", args, pieces, finish, usage)
	}
}

func TestStatusAndMalformed(t *testing.T) {
	s := fakeopenai.Start(t)
	s.Push(fakeopenai.Status(429, 1500*time.Millisecond), fakeopenai.Status(500, 0), fakeopenai.Malformed())
	resp := post(t, s, chatBody("q", false))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("429: status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp = post(t, s, chatBody("q", false))
	var e struct {
		Error struct{ Message, Type string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != 500 || e.Error.Type != "server_error" {
		t.Errorf("500: status %d, body %+v, %v", resp.StatusCode, e, err)
	}
	body, _ := io.ReadAll(post(t, s, chatBody("q", false)).Body)
	if json.Valid(body) {
		t.Errorf("malformed body is valid JSON: %s", body)
	}
	if resp := post(t, s, "{not json"); resp.StatusCode != 400 {
		t.Errorf("bad request JSON: status %d", resp.StatusCode)
	}
	if resp, err := http.Get(s.URL() + "/embeddings"); err != nil || resp.StatusCode != 404 {
		t.Errorf("unknown path: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

func TestHangEndsOnClose(t *testing.T) {
	s := fakeopenai.New()
	s.Push(fakeopenai.Hang())
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(chatBody("q", false)))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	testutil.WaitFor(t, "the request to take the hanging answer", func() bool { return s.Pending() == 0 })
	s.Close()
	select {
	case <-done: // the held request ended (with or without an error) instead of hanging
	case <-time.After(testutil.HangGuard):
		t.Fatal("the request held by Hang did not end when the server closed")
	}
	if got := len(s.Requests()); got != 1 {
		t.Fatalf("the server recorded %d requests; want the one it held", got)
	}
	s.Close() // a second Close is harmless
}

func TestConcurrentConversationsWithMatchers(t *testing.T) {
	s := fakeopenai.Start(t)
	for _, conv := range []string{"alice", "bob"} {
		isConv := func(r fakeopenai.Request) bool { return strings.HasPrefix(r.LastUser(), conv) }
		s.Push(fakeopenai.Text("first for "+conv).When(isConv), fakeopenai.Text("second for "+conv).When(isConv))
	}
	var wg sync.WaitGroup
	for _, conv := range []string{"bob", "alice"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, want := range []string{"first for " + conv, "second for " + conv} {
				resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(chatBody(conv+" says hi", false)))
				if err != nil {
					t.Error(err)
					return
				}
				var a answer
				err = json.NewDecoder(resp.Body).Decode(&a)
				resp.Body.Close()
				if err != nil || *a.Choices[0].Message.Content != want {
					t.Errorf("%s: got %+v (%v), want %q", conv, a, err, want)
				}
			}
		}()
	}
	wg.Wait()
	if s.Pending() != 0 || len(s.Requests()) != 4 {
		t.Errorf("pending %d, requests %d", s.Pending(), len(s.Requests()))
	}
}
