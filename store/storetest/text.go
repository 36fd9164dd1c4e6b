package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// rawText holds what command output, web pages and MCP results hold as a
// matter of course and PostgreSQL refuses in text: a NUL byte and a byte
// of invalid UTF-8.
const rawText = "a\x00b\xffc"

// raw is rawText with a name before it, so that keys stay distinct.
func raw(name string) string { return name + " " + rawText }

// sameText reports whether got is want as stored: unchanged, or with its
// NUL and invalid bytes written as the chat display shows them
// (textutil.Storable), as a store that cannot keep them does.
func sameText(got, want string) bool {
	return got == want || got == textutil.Storable(want)
}

// TextContract tests that every text a store.Store writes survives a NUL
// byte and invalid UTF-8 (command output holds them): each write path
// given such text succeeds, and reads it back unchanged or as
// textutil.Storable writes it, and a lookup by such a text finds what
// was stored under it. The optional queues of a shared store (Inbox,
// InboxReplies, InboxResetter, Outbox, SendSlots, ConfigFingerprints)
// are tested when the store has them. newStore must make the store read
// its time from now.
func TextContract(t *testing.T, newStore func(t *testing.T, now func() time.Time) store.Store) {
	t.Helper()
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, s store.Store, clock *Clock)
	}{
		{"history", textHistory},
		{"approvals", textApprovals},
		{"audit, standing allows and grants", textAuditStanding},
		{"cursors, memory and usage", textSmall},
		{"checkpoints", textCheckpoints},
		{"cluster", textCluster},
		{"pairing", textPairing},
		{"shared queues", textQueues},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock(clusterEpoch)
			tt.run(t, newStore(t, clock.Now), clock)
		})
	}
}

func textHistory(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	conv := raw("conv")
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: raw("user")},
		{Role: llm.RoleAssistant, Content: raw("assistant"), ToolCalls: []llm.ToolCall{{ID: raw("id"), Name: "shell", Args: `{"command":"` + raw("args") + `"}`}}},
		{Role: llm.RoleTool, Content: raw("output"), ToolCallID: raw("id")},
	}
	for _, write := range []struct {
		name string
		do   func() error
	}{
		{"Append", func() error { return s.Append(ctx, conv, msgs...) }},
		{"Replace", func() error { return s.Replace(ctx, conv, msgs) }},
	} {
		if err := write.do(); err != nil {
			t.Fatalf("%s of text holding NUL and invalid UTF-8: %v", write.name, err)
		}
		got, err := s.Load(ctx, conv)
		if err != nil || len(got) != len(msgs) {
			t.Fatalf("Load after %s = %d messages, %v; want %d", write.name, len(got), err, len(msgs))
		}
		for i, m := range msgs {
			g := got[i]
			if g.Role != m.Role || !sameText(g.Content, m.Content) || !sameText(g.ToolCallID, m.ToolCallID) || len(g.ToolCalls) != len(m.ToolCalls) {
				t.Fatalf("Load after %s: message %d = %+v; want %+v", write.name, i, g, m)
			}
			for j, c := range m.ToolCalls {
				// The calls are stored as JSON, which escapes a NUL and
				// replaces an invalid byte (U+FFFD) on its own.
				if g.ToolCalls[j].ID != textutil.Storable(c.ID) && g.ToolCalls[j].ID != "id a\x00b\ufffdc" {
					t.Fatalf("Load after %s: call %d of message %d = %+v; want %+v", write.name, j, i, g.ToolCalls[j], c)
				}
			}
		}
	}
}

func textApprovals(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	now := clock.Now()
	a := record.Approval{
		Token: "tok", Conv: core.Conversation{Gateway: "console", Chat: raw("chat"), Thread: raw("thread")},
		RequestedBy: core.Identity(raw("user")), Call: llm.ToolCall{ID: raw("id"), Name: "shell", Args: raw("args")},
		Digest: "digest", Rule: raw("rule"), Reason: raw("reason"),
		Created: now, Expires: now.Add(time.Hour), Status: record.StatusPending,
	}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatalf("CreateApproval: %v", err)
	}
	if _, err := s.ClaimApproval(ctx, a.Token, record.StatusExecuting, core.Identity(raw("approver")), raw("claim"), now); err != nil {
		t.Fatalf("ClaimApproval: %v", err)
	}
	if err := s.FinishApproval(ctx, a.Token, record.StatusExecuted, raw("output"), now); err != nil {
		t.Fatalf("FinishApproval with an output holding NUL and invalid UTF-8: %v", err)
	}
	got, err := s.Approval(ctx, a.Token)
	if err != nil || got.Status != record.StatusExecuted || !sameText(got.Note, raw("output")) ||
		!sameText(got.Conv.Chat, a.Conv.Chat) || !sameText(got.Conv.Thread, a.Conv.Thread) ||
		!sameText(string(got.RequestedBy), string(a.RequestedBy)) || !sameText(string(got.ResolvedBy), raw("approver")) ||
		!sameText(got.Call.ID, a.Call.ID) || !sameText(got.Call.Args, a.Call.Args) ||
		!sameText(got.Rule, a.Rule) || !sameText(got.Reason, a.Reason) {
		t.Fatalf("Approval = %+v, %v; want %+v executed", got, err, a)
	}
	if list, err := s.Approvals(ctx, record.StatusExecuted); err != nil || len(list) != 1 {
		t.Fatalf("Approvals(executed) = %d, %v; want 1", len(list), err)
	}
}

func textAuditStanding(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	e := record.AuditEntry{
		At: clock.Now(), Conv: raw("conv"), Tool: raw("tool"), Args: raw("args"),
		RequestedBy: core.Identity(raw("user")), ApprovedBy: core.Identity(raw("approver")),
		Outcome: "executed", Detail: raw("output"),
	}
	if err := s.AppendAudit(ctx, e); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	got, err := s.QueryAudit(ctx, record.AuditFilter{Conv: e.Conv, Tool: e.Tool})
	if err != nil || len(got) != 1 || !sameText(got[0].Args, e.Args) || !sameText(got[0].Detail, e.Detail) ||
		!sameText(string(got[0].RequestedBy), string(e.RequestedBy)) || !sameText(string(got[0].ApprovedBy), string(e.ApprovedBy)) {
		t.Fatalf("QueryAudit by the conversation and tool = %+v, %v; want %+v", got, err, e)
	}

	sa := record.StandingAllow{
		Tool: "shell", Args: raw("args"), AddedBy: core.Identity(raw("approver")), Added: clock.Now(),
		Conv: raw("conv"), Files: map[string]string{raw("path"): "absent"},
	}
	if _, err := s.AddStandingAllow(ctx, sa); err != nil {
		t.Fatalf("AddStandingAllow: %v", err)
	}
	found, err := s.StandingAllowFor(ctx, sa.Tool, sa.Args)
	if err != nil || !sameText(found.Args, sa.Args) || !sameText(found.Conv, sa.Conv) || len(found.Files) != 1 {
		t.Fatalf("StandingAllowFor its arguments = %+v, %v; want %+v", found, err, sa)
	}
	if _, err := s.RemoveStandingAllow(ctx, found.ID); err != nil {
		t.Fatalf("RemoveStandingAllow: %v", err)
	}

	g := record.Grant{Tool: "shell", Args: raw("args"), Conv: raw("conv"), GrantedBy: core.Identity(raw("approver")),
		Granted: clock.Now(), Expires: clock.Now().Add(time.Hour), Files: map[string]string{raw("path"): "absent"}}
	if _, err := s.AddGrant(ctx, g); err != nil {
		t.Fatalf("AddGrant: %v", err)
	}
	grants, err := s.GrantsFor(ctx, g.Tool, g.Args, g.Conv, clock.Now())
	if err != nil || len(grants) != 1 || !sameText(grants[0].Args, g.Args) || len(grants[0].Files) != 1 {
		t.Fatalf("GrantsFor its arguments = %+v, %v; want %+v", grants, err, g)
	}
	if _, err := s.RemoveGrant(ctx, grants[0].ID); err != nil {
		t.Fatalf("RemoveGrant: %v", err)
	}
}

func textSmall(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	if err := s.SetCursor(ctx, raw("key"), raw("value")); err != nil {
		t.Fatalf("SetCursor: %v", err)
	}
	if v, err := s.Cursor(ctx, raw("key")); err != nil || !sameText(v, raw("value")) {
		t.Fatalf("Cursor = %q, %v; want %q", v, err, raw("value"))
	}
	if err := s.Remember(ctx, raw("scope"), raw("key")); err != nil {
		t.Fatalf("Remember: %v", err)
	}
	if ok, err := s.Remembered(ctx, raw("scope"), raw("key")); err != nil || !ok {
		t.Fatalf("Remembered = %v, %v; want true", ok, err)
	}
	if err := s.AddUsage(ctx, raw("conv"), llm.Usage{PromptTokens: 3}); err != nil {
		t.Fatalf("AddUsage: %v", err)
	}
	if u, err := s.Usage(ctx, raw("conv"), clock.Now()); err != nil || u.PromptTokens != 3 {
		t.Fatalf("Usage = %+v, %v; want 3 prompt tokens", u, err)
	}
}

func textCheckpoints(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	c := record.Checkpoint{
		Conv: core.Conversation{Gateway: "console", Chat: raw("chat"), Thread: raw("thread")},
		Tool: "shell", Args: raw("args"), CallID: raw("id"), RequestedBy: core.Identity(raw("user")),
		Approval: raw("token"), Created: clock.Now(),
		// A file name and a link's target are any bytes, kept exactly.
		Files: []record.CheckpointFile{{Path: raw("path"), Kind: record.KindSymlink, Target: raw("target")}},
	}
	id, err := s.AddCheckpoint(ctx, c)
	if err != nil {
		t.Fatalf("AddCheckpoint: %v", err)
	}
	marker := c
	marker.Files, marker.NoCheckpoint = nil, raw("why")
	if _, err := s.AddCheckpoint(ctx, marker); err != nil {
		t.Fatalf("AddCheckpoint of a marker: %v", err)
	}
	if _, err := s.MarkUndone(ctx, id, core.Identity(raw("undoer")), clock.Now()); err != nil {
		t.Fatalf("MarkUndone: %v", err)
	}
	got, err := s.Checkpoint(ctx, id)
	if err != nil || !sameText(got.Args, c.Args) || !sameText(got.Conv.Chat, c.Conv.Chat) ||
		!sameText(string(got.UndoneBy), raw("undoer")) || len(got.Files) != 1 ||
		got.Files[0].Path != raw("path") || got.Files[0].Target != raw("target") {
		t.Fatalf("Checkpoint = %+v, %v; want %+v undone", got, err, c)
	}
	list, err := s.Checkpoints(ctx, record.CheckpointFilter{Conv: c.Conv.Key()})
	if err != nil || len(list) != 2 || !sameText(list[0].NoCheckpoint, raw("why")) {
		t.Fatalf("Checkpoints of the conversation = %+v, %v; want the marker then the checkpoint", list, err)
	}
}
