package gateways_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

func TestOutcomeLine(t *testing.T) {
	r := core.ApprovalResolution{Status: "denied", By: "slack:U1001", At: time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)}
	if got := gateways.OutcomeLine(r); got != "❌ Denied by slack:U1001 at 2026-05-01 14:03 UTC" {
		t.Errorf("outcome line %q", got)
	}
}

// TestPromptBookUpdatesEachMessageOncePerStatus: every request message of
// the token is updated once per status, a failed update is tried again with
// the next announcement, and other tokens' messages are left alone.
func TestPromptBookUpdatesEachMessageOncePerStatus(t *testing.T) {
	var book gateways.PromptBook[string]
	p := core.ApprovalPrompt{Token: "K7Q2MX9P", Expires: time.Now().Add(time.Minute)}
	book.Add(p, "chat-a")
	book.Add(p, "chat-b")
	book.Add(core.ApprovalPrompt{Token: "OTHER234", Expires: time.Now().Add(time.Minute)}, "chat-c")

	var updated []string
	failB := true
	update := func(msg string) error {
		if msg == "chat-b" && failB {
			return errors.New("edit refused")
		}
		updated = append(updated, msg)
		return nil
	}
	executed := core.ApprovalResolution{Token: p.Token, Status: "executed"}
	if n := book.Update(executed, update); n != 2 {
		t.Fatalf("Update knew %d messages; want 2", n)
	}
	failB = false
	book.Update(executed, update) // the same resolution, announced again
	book.Update(executed, update)
	if want := []string{"chat-a", "chat-b"}; len(updated) != 2 || updated[0] != want[0] || updated[1] != want[1] {
		t.Fatalf("updated %q; want each message once, chat-b once its edit worked", updated)
	}
	book.Update(core.ApprovalResolution{Token: p.Token, Status: "failed"}, update)
	if len(updated) != 4 {
		t.Fatalf("a new status updated %d messages; want both again", len(updated)-2)
	}
	if n := book.Update(core.ApprovalResolution{Token: "NOSUCH23", Status: "executed"}, update); n != 0 {
		t.Fatalf("an unknown token knew %d messages", n)
	}
}

// TestPromptBookAddAfterTheResolution: a message added after its
// approval's resolution was announced gets that resolution back from Add
// (the latest, when there were several); one added before does not.
func TestPromptBookAddAfterTheResolution(t *testing.T) {
	var book gateways.PromptBook[string]
	p := core.ApprovalPrompt{Token: "K7Q2MX9P", Expires: time.Now().Add(time.Minute)}
	if _, late := book.Add(p, "early"); late {
		t.Fatal("a message added before any resolution is late")
	}
	book.Update(core.ApprovalResolution{Token: p.Token, Status: "approved"}, func(string) error { return nil })
	book.Update(core.ApprovalResolution{Token: p.Token, Status: "executed"}, func(string) error { return nil })
	r, late := book.Add(p, "held up")
	if !late || r.Status != "executed" {
		t.Fatalf("Add after the resolution = %+v, %v; want the latest, executed", r, late)
	}
	if _, late := book.Add(core.ApprovalPrompt{Token: "OTHER234"}, "other"); late {
		t.Error("another token's message is late")
	}
}
