package gatewaytest

import (
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// SendFileCall is the call id of the send_file call PushSendFileTurn
// scripts.
const SendFileCall = "call_file"

// PushSendFileTurn scripts the model for a turn that sends a file: call
// send_file with args (a JSON object: path, caption), then answer with
// answer.
func PushSendFileTurn(ai *fakeoai.Server, args, answer string) {
	ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: SendFileCall, Name: "send_file", Args: args}),
		fakeoai.Text(answer),
	)
}

// SendFileResult waits for the model's request that carries the result
// of PushSendFileTurn's send_file call and returns what the model was
// told.
func SendFileResult(t testing.TB, ai *fakeoai.Server) string {
	t.Helper()
	var result string
	WaitFirst(t, "the result of send_file fed back to the model", ai.Requests, func(r fakeoai.Request) bool {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.ToolCallID == SendFileCall {
				result = m.Content
				return true
			}
		}
		return false
	})
	return result
}
