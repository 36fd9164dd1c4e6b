package slack_test

// End-to-end tests of send_file on Slack: the model's tool call runs in
// the real app; the file goes through the unmodified slack-go client's
// external upload flow to the fake Web API.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
)

var report = bytes.Repeat([]byte("PK\x03\x04\x00\xff\r\n slack report "), 3000)

func (e *e2e) writeWorkspace(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.workspace, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *e2e) waitShared(t *testing.T) fakeslack.SharedFile {
	t.Helper()
	return gatewaytest.WaitFirst(t, "a file shared", e.sl.SharedFiles, func(fakeslack.SharedFile) bool { return true })
}

func TestE2ESendFileSharedInTheThreadByteForByte(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	e.writeWorkspace(t, "report.zip", report)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"report.zip","caption":"Your <!channel> report"}`, "Sent.")
	ts := e.sl.InjectMention(channel, guest, "send me the report", "")
	f := e.waitShared(t)
	if f.Channel != channel || f.ThreadTS != ts || f.Name != "report.zip" {
		t.Fatalf("shared %q in %s thread %q, want report.zip in %s thread %s", f.Name, f.Channel, f.ThreadTS, channel, ts)
	}
	if !bytes.Equal(f.Data, report) {
		t.Fatalf("%d bytes arrived, want the %d of the file exactly", len(f.Data), len(report))
	}
	if f.InitialComment != "Your &lt;!channel&gt; report" {
		t.Errorf("initial_comment %q: the caption must stay text", f.InitialComment)
	}
	if p := e.waitPost(t, channel, "Sent."); p.ThreadTS != ts {
		t.Errorf("the answer went to thread %q", p.ThreadTS)
	}
	if res := gatewaytest.SendFileResult(t, e.ai); !strings.HasPrefix(res, "sent report.zip") {
		t.Errorf("the model was told %q", res)
	}
}

func TestE2ESendFileUploadWaitsOutA429(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	e.writeWorkspace(t, "report.zip", report)
	e.sl.FailNext(fakeslack.UploadMethod, 1, fakeslack.FaultRateLimited)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"report.zip"}`, "Sent.")
	e.sl.InjectDM(guest, "send me the report")
	f := e.waitShared(t)
	if !bytes.Equal(f.Data, report) || f.Channel != fakeslack.DMChannel(guest) {
		t.Fatalf("%d bytes shared in %s", len(f.Data), f.Channel)
	}
	if n := e.sl.Calls(fakeslack.UploadMethod); n != 2 {
		t.Errorf("%d POSTs to the upload URL, want the refused one and its retry", n)
	}
	if n := e.sl.Early(); n != 0 {
		t.Errorf("%d requests came before the Retry-After had passed", n)
	}
}

func TestE2ESendFileWithASecretIsRefused(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	e.writeWorkspace(t, "notes.txt", []byte("the key is "+e2eAPIKey))
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"notes.txt"}`, "I may not send that file.")
	e.sl.InjectDM(guest, "send me notes.txt")
	e.waitPost(t, fakeslack.DMChannel(guest), "I may not send that file.")
	if res := gatewaytest.SendFileResult(t, e.ai); !strings.Contains(res, "holds one of the bot's secrets") {
		t.Errorf("the model was told %q", res)
	}
	if n := e.sl.Calls("files.getUploadURLExternal"); n != 0 || len(e.sl.SharedFiles()) != 0 {
		t.Fatalf("%d upload requests; a file holding a secret must not be sent", n)
	}
}
