package discord_test

// End-to-end tests of send_file on Discord: the model's tool call runs in
// the real app; the file goes through the unmodified discordgo client as
// a multipart message to the fake REST API.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
)

var report = bytes.Repeat([]byte("PK\x03\x04\x00\xff\r\n discord report "), 3000)

func (e *e2e) writeWorkspace(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.workspace, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *e2e) waitFile(t *testing.T) fakediscord.File {
	t.Helper()
	return gatewaytest.WaitFirst(t, "a file sent", e.dc.Files, func(fakediscord.File) bool { return true })
}

func TestE2ESendFileArrivesByteForByte(t *testing.T) {
	e := startE2E(t)
	e.writeWorkspace(t, "report.zip", report)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"report.zip","caption":"Your report, @everyone"}`, "Sent.")
	e.inTeam(guest, e.mention()+"send me the report")
	f := e.waitFile(t)
	if f.ChannelID != team || f.Name != "report.zip" || f.Field != "files[0]" || f.Content != "Your report, @everyone" {
		t.Fatalf("file %q (%s) in %s with %q", f.Name, f.Field, f.ChannelID, f.Content)
	}
	if !bytes.Equal(f.Data, report) {
		t.Fatalf("%d bytes arrived, want the %d of the file exactly", len(f.Data), len(report))
	}
	m, ok := e.dc.Message(f.MessageID)
	if !ok || m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 1 || m.AllowedMentions.Parse[0] != "users" {
		t.Errorf("the file's message may ping: %+v", m.AllowedMentions)
	}
	e.waitSent(t, team, "Sent.")
	if res := gatewaytest.SendFileResult(t, e.ai); !strings.HasPrefix(res, "sent report.zip") {
		t.Errorf("the model was told %q", res)
	}
}

func TestE2ESendFileWaitsOutA429(t *testing.T) {
	e := startE2E(t)
	e.writeWorkspace(t, "report.zip", report)
	e.dc.FailNext(fakediscord.RouteCreateMessage, 1, fakediscord.FaultTooMany)
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"report.zip"}`, "Sent.")
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "send me the report"})
	f := e.waitFile(t)
	if !bytes.Equal(f.Data, report) || f.ChannelID != ch {
		t.Fatalf("%d bytes in %s", len(f.Data), f.ChannelID)
	}
	if n := e.dc.Calls(fakediscord.RouteCreateMessage); n < 2 {
		t.Errorf("%d message requests, want the refused upload and its retry", n)
	}
	if n := e.dc.Early(); n != 0 {
		t.Errorf("%d requests came before the retry_after had passed", n)
	}
}

func TestE2ESendFileOverTheLimitIsRefused(t *testing.T) {
	e := startE2E(t)
	e.writeWorkspace(t, "big.bin", bytes.Repeat([]byte{1}, fakediscord.MaxFileBytes+1))
	gatewaytest.PushSendFileTurn(e.ai, `{"path":"big.bin"}`, "Too big.")
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "send big.bin"})
	res := gatewaytest.SendFileResult(t, e.ai)
	if !strings.Contains(res, `"big.bin" is 10 MiB (10485761 bytes); discord takes files of at most 10 MiB (10485760 bytes)`) {
		t.Errorf("the model was told %q", res)
	}
	e.waitSent(t, ch, "Too big.")
	if len(e.dc.Files()) != 0 {
		t.Fatal("a file over the limit was sent")
	}
}
