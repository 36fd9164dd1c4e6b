package telegram_test

// End-to-end tests of send_file on Telegram: the model's tool call (from
// the fake OpenAI server) runs in the real app, and the file reaches the
// fake Bot API through the unmodified library.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// binaryReport is a file that is not text: zeros, high bytes, CR LF.
var binaryReport = bytes.Repeat([]byte("PK\x03\x04\x00\xff\r\n report "), 4000)

func (e *e2e) writeWorkspace(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.workspace, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *e2e) waitUpload(t *testing.T) faketg.Upload {
	t.Helper()
	return gatewaytest.WaitFirst(t, "a file sent", e.tg.Uploads, func(faketg.Upload) bool { return true })
}

func TestE2ESendFileArrivesByteForByte(t *testing.T) {
	e := startE2E(t)
	e.writeWorkspace(t, "report.zip", binaryReport)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"report.zip","caption":"Your report"}`, "Sent.")
	e.tg.InjectMessage(private(guest, "send me the report"))
	e.waitSent(t, guest.ID, "Sent.")
	u := e.waitUpload(t)
	if u.Method != "sendDocument" || u.ChatID != guest.ID || u.FileName != "report.zip" || u.Caption != "Your report" {
		t.Fatalf("upload %s to %d: %q %q", u.Method, u.ChatID, u.FileName, u.Caption)
	}
	if !bytes.Equal(u.Data, binaryReport) {
		t.Fatalf("%d bytes arrived, want the %d of the file exactly", len(u.Data), len(binaryReport))
	}
	if res := gatewaytest.SendFileResult(t, e.ai); !strings.HasPrefix(res, "sent report.zip") {
		t.Errorf("the model was told %q", res)
	}
}

func TestE2ESendFileImageGoesAsAPhoto(t *testing.T) {
	e := startE2E(t)
	e.writeWorkspace(t, "chart.png", pngBytes)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"chart.png"}`, "Here it is.")
	e.tg.InjectMessage(private(guest, "the chart please"))
	u := e.waitUpload(t)
	if u.Method != "sendPhoto" || !bytes.Equal(u.Data, pngBytes) || u.Caption != "" {
		t.Fatalf("upload %s of %d bytes, caption %q; want the PNG as a photo", u.Method, len(u.Data), u.Caption)
	}
}

func TestE2ESendFileWithASecretIsRefused(t *testing.T) {
	e := startE2E(t)
	e.writeWorkspace(t, ".env", []byte("OPENAI_API_KEY="+e2eAPIKey+"\n"))
	gatewaytest.PushSendFileTurn(e.ai, `{"path":".env"}`, "I may not send that file.")
	e.tg.InjectMessage(private(guest, "send me .env"))
	e.waitSent(t, guest.ID, "I may not send that file.")
	if res := gatewaytest.SendFileResult(t, e.ai); !strings.Contains(res, "holds one of the bot's secrets") {
		t.Errorf("the model was told %q", res)
	}
	if n := e.tg.Calls("sendDocument") + e.tg.Calls("sendPhoto"); n != 0 || len(e.tg.Uploads()) != 0 {
		t.Fatalf("%d upload requests; a file holding a secret must not be sent", n)
	}
}

func TestE2ESendFileOverTheLimitIsRefusedBeforeReading(t *testing.T) {
	e := startE2E(t)
	// A sparse file: its size says 50 MiB and a byte, no byte is written.
	big := filepath.Join(e.workspace, "huge.bin")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, faketg.MaxDocument+1); err != nil {
		t.Fatal(err)
	}
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"huge.bin"}`, "Too big.")
	e.tg.InjectMessage(private(guest, "send huge.bin"))
	res := gatewaytest.SendFileResult(t, e.ai)
	if !strings.Contains(res, `"huge.bin" is 50 MiB (52428801 bytes); telegram takes files of at most 50 MiB (52428800 bytes)`) {
		t.Errorf("the model was told %q", res)
	}
	e.waitSent(t, guest.ID, "Too big.")
	if n := e.tg.Calls("sendDocument"); n != 0 {
		t.Fatalf("%d sendDocument requests; a file over the limit must not be sent", n)
	}
}

func TestE2ESendFileWaitsOutA429(t *testing.T) {
	// The fake's retry_after unit is the client's (FastConfig): 10ms.
	e := startE2EWith(t, faketg.Options{RetryAfter: 5, RetryAfterUnit: 10 * time.Millisecond}, nil)
	e.writeWorkspace(t, "report.zip", binaryReport)
	e.tg.FailNext("sendDocument", 1, faketg.FaultTooMany)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"report.zip"}`, "Sent.")
	e.tg.InjectMessage(private(guest, "send me the report"))
	u := e.waitUpload(t)
	if !bytes.Equal(u.Data, binaryReport) {
		t.Fatalf("%d bytes arrived after the retry", len(u.Data))
	}
	if n := e.tg.Calls("sendDocument"); n != 2 {
		t.Errorf("%d sendDocument requests, want the refused one and its retry", n)
	}
	if n := e.tg.EarlyCalls("sendDocument"); n != 0 {
		t.Errorf("%d sendDocument requests came before the retry_after had passed", n)
	}
}

// private is a text message from from in its private chat with the bot.
func private(from faketg.User, text string) faketg.Message {
	return faketg.Message{From: &from, Chat: faketg.Chat{ID: from.ID, Type: "private"}, Text: text}
}

// A rule can hold send_file like any tool: nothing is sent until an
// approver approves; then the file goes to the conversation that asked
// (the approved call keeps its conversation), not to the approver's.
func TestE2ESendFileHeldByARuleGoesWhereItWasAskedOnceApproved(t *testing.T) {
	e := startE2EWith(t, faketg.Options{}, func(c *config.Config) {
		c.Policy.Rules = append([]config.Rule{{Tool: "send_file", Decision: config.DecisionApprove}}, c.Policy.Rules...)
	})
	e.writeWorkspace(t, "report.zip", binaryReport)
	e.ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: gatewaytest.SendFileCall, Name: "send_file", Args: `{"path":"report.zip"}`}),
		fakeoai.Text("I asked an approver to allow it."),
		fakeoai.Text("Sent."),
	)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot send the report"})
	req, token := e.waitRequest(t, team.ID)
	e.waitSent(t, team.ID, "I asked an approver to allow it.")
	if n := len(e.tg.Uploads()); n != 0 {
		t.Fatalf("%d files sent before the approval", n)
	}
	e.tg.InjectCallback(faketg.Callback{From: owner, ChatID: team.ID, MessageID: req.MessageID, Data: "a:" + token})
	u := e.waitUpload(t)
	if u.ChatID != team.ID || !bytes.Equal(u.Data, binaryReport) {
		t.Fatalf("the approved file went to chat %d (%d bytes), want the group %d", u.ChatID, len(u.Data), team.ID)
	}
	e.waitSent(t, team.ID, "Sent.")
}
