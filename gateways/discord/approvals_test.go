package discord

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

var prompt = core.ApprovalPrompt{Token: "K7Q2MX9P", Tool: "shell", Hint: "Reply /approve K7Q2MX9P or /deny K7Q2MX9P", AllowAlways: true, Expires: time.Now().Add(time.Hour)}

var guildConv = core.Conversation{Gateway: Name, Chat: chanID}

func TestPromptApprovalButtons(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	if err := h.gw.PromptApproval(t.Context(), guildConv, "Approval needed: shell\necho hi", prompt); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages(chanID)[0]
	if !strings.Contains(m.Content, "echo hi") || !strings.Contains(m.Content, prompt.Hint) {
		t.Errorf("request text %q", m.Content)
	}
	var ids, labels []string
	for _, b := range fakediscord.Buttons(m.Components) {
		ids, labels = append(ids, b.CustomID), append(labels, b.Label)
		if len(b.CustomID) > 100 {
			t.Errorf("custom_id %q is too long", b.CustomID)
		}
	}
	if strings.Join(ids, " ") != "gh:a:K7Q2MX9P gh:d:K7Q2MX9P gh:A:K7Q2MX9P" || strings.Join(labels, ",") != "Approve,Deny,Approve always" {
		t.Fatalf("buttons %q %q", ids, labels)
	}
	p := prompt
	p.AllowAlways = false
	if err := h.gw.PromptApproval(t.Context(), guildConv, "again", p); err != nil {
		t.Fatal(err)
	}
	if n := len(fakediscord.Buttons(fake.Messages(chanID)[1].Components)); n != 2 {
		t.Errorf("%d buttons without Approve always", n)
	}
}

func TestUpdateApprovalEditsRequest(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	if err := h.gw.PromptApproval(t.Context(), guildConv, "Approval needed: shell", prompt); err != nil {
		t.Fatal(err)
	}
	req := fake.Messages(chanID)[0]
	at := time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
	r := core.ApprovalResolution{Token: prompt.Token, Status: "approved", By: "discord:3001", At: at}
	h.gw.UpdateApproval(t.Context(), r)
	h.gw.UpdateApproval(t.Context(), r) // announced to each conversation: one edit
	m, _ := fake.Message(req.ID)
	want := "Approval needed: shell\n\n✅ Approved by discord:3001 at 2026-05-01 14:03 UTC"
	if m.Content != want || len(m.Components) != 0 {
		t.Fatalf("edited request %q components %v, want %q and no buttons", m.Content, m.Components, want)
	}
	if n := len(fake.Edits()); n != 1 {
		t.Errorf("%d edits, want 1", n)
	}
	h.gw.UpdateApproval(t.Context(), core.ApprovalResolution{Token: "UNKNOWN", Status: "denied"}) // nothing to edit
}

// TestRequestSentAfterItsResolutionShowsIt: a request whose send was held
// up (a rate-limit pause) while an approver resolved it elsewhere is edited
// to the outcome as soon as it is sent: it never keeps live buttons.
func TestRequestSentAfterItsResolutionShowsIt(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	h.gw.UpdateApproval(t.Context(), core.ApprovalResolution{Token: prompt.Token, Status: "denied", By: "telegram:1001", At: time.Now()})
	if err := h.gw.PromptApproval(t.Context(), guildConv, "Approval needed: shell", prompt); err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(fake.Messages(chanID)[0].ID)
	if len(m.Components) != 0 || !strings.Contains(m.Content, "Denied by telegram:1001") {
		t.Fatalf("the request after a resolution announced before it: %q, components %v", m.Content, m.Components)
	}
}

func TestButtonPressAcknowledgedFirstAsThePresser(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	var ackedBefore atomic.Int32
	h.appr.OnPress(func() { ackedBefore.Store(int32(len(fake.InteractionResponses()))) })
	h.appr.SetReply("not authorised")
	h.start()
	if err := h.gw.PromptApproval(t.Context(), guildConv, "Approval needed: shell", prompt); err != nil {
		t.Fatal(err)
	}
	req := fake.Messages(chanID)[0]
	in := fake.InjectButtonPress(fakediscord.Press{ChannelID: chanID, GuildID: guildID, MessageID: req.ID, User: ben, CustomID: "gh:A:" + prompt.Token})
	testutil.WaitFor(t, "the ephemeral follow-up", func() bool { return len(followups(fake, in.ID)) == 1 })
	f := followups(fake, in.ID)[0]
	if f.Content != "not authorised" || f.Flags&fakediscord.FlagEphemeral == 0 {
		t.Errorf("follow-up %+v: want an ephemeral \"not authorised\"", f)
	}
	resp := fake.InteractionResponses()
	if len(resp) != 1 || resp[0].Type != fakediscord.CallbackDeferredUpdate || resp[0].Code != 0 {
		t.Fatalf("callbacks %+v: want one accepted deferred update", resp)
	}
	if ackedBefore.Load() != 1 {
		t.Error("the press was resolved before it was acknowledged")
	}
	calls := h.appr.Calls()
	want := gatewaytest.Press{From: "discord:3002", Conv: guildConv, Token: prompt.Token, Decision: core.DecisionApproveAlways}
	if len(calls) != 1 || calls[0] != want {
		t.Fatalf("presses %+v, want %+v", calls, want)
	}
	// In a DM the presser is the interaction's user.
	dmChan := fake.DMChannel(ann.ID)
	fake.InjectButtonPress(fakediscord.Press{ChannelID: dmChan, MessageID: req.ID, User: ann, CustomID: "gh:d:" + prompt.Token})
	testutil.WaitFor(t, "the DM press", func() bool { return len(h.appr.Calls()) == 2 })
	if c := h.appr.Calls()[1]; c.From != "discord:3001" || c.Decision != core.DecisionDeny || c.Conv.Chat != dmChan {
		t.Errorf("DM press %+v", c)
	}
	// A button that is not an approval's resolves nothing.
	in = fake.InjectButtonPress(fakediscord.Press{ChannelID: chanID, GuildID: guildID, MessageID: req.ID, User: ann, CustomID: "something-else"})
	testutil.WaitFor(t, "the answer to an unknown button", func() bool { return len(followups(fake, in.ID)) == 1 })
	if n := len(h.appr.Calls()); n != 2 {
		t.Errorf("an unknown button was resolved (%d presses)", n)
	}
}

// An interaction Discord does not know (forged, or replayed after its
// answer) cannot be acknowledged: nothing is resolved, since Discord shows
// its presser that it failed.
func TestUnacknowledgedInteractionResolvesNothing(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	forged := `{"id":"990001","token":"forged-token","type":3,"application_id":"1","channel_id":"` + chanID +
		`","user":{"id":"3001","username":"ann"},"data":{"custom_id":"gh:a:K7Q2MX9P","component_type":2}}`
	fake.InjectDispatch("INTERACTION_CREATE", []byte(forged))
	testutil.WaitFor(t, "the refused acknowledgement", func() bool { return strings.Contains(h.logs.String(), "cannot acknowledge") })
	h.stop() // waits for the press's goroutine
	if calls := h.appr.Calls(); len(calls) != 0 {
		t.Fatalf("an interaction that could not be acknowledged was resolved: %+v", calls)
	}
}

// followups returns the follow-ups of an interaction.
func followups(fake *fakediscord.Server, interaction string) []fakediscord.Sent {
	var out []fakediscord.Sent
	for _, s := range fake.Sent() {
		if s.Via == fakediscord.ViaFollowup && s.Interaction == interaction {
			out = append(out, s)
		}
	}
	return out
}

func TestSlashCommands(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake, func(c *Config) { c.GuildID = guildID }).start()
	testutil.WaitFor(t, "the commands registered", func() bool { return len(fake.Commands(guildID)) == 3 })
	if n := len(fake.Commands("")); n != 0 {
		t.Errorf("%d global commands with guild_id set", n)
	}
	in := fake.InjectSlashCommand(fakediscord.SlashCommand{ChannelID: chanID, GuildID: guildID, User: ann, Name: "approve",
		Options: []fakediscord.OptionValue{{Name: "token", Type: 3, Value: "K7Q2MX9P"}, {Name: "always", Type: 5, Value: true}}})
	s := h.inbox.Next(t)
	if s.Text != "/approve K7Q2MX9P always" || s.From != "discord:3001" || s.Conv != guildConv {
		t.Fatalf("signal %+v", s)
	}
	resp := fake.InteractionResponses()
	if len(resp) != 1 || resp[0].Type != fakediscord.CallbackDeferredMessage || resp[0].Flags&fakediscord.FlagEphemeral == 0 {
		t.Fatalf("callbacks %+v: want a deferred ephemeral answer first", resp)
	}
	// The reply to it answers the interaction, not the channel.
	if _, err := h.gw.Act(t.Context(), core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "Approved.", ReplyTo: s.MessageID}); err != nil {
		t.Fatal(err)
	}
	var answered bool
	for _, e := range fake.Edits() {
		answered = answered || e.Interaction == in.ID && e.Content == "Approved."
	}
	if !answered {
		t.Errorf("the reply did not fill in the deferred answer; edits %+v", fake.Edits())
	}
	for _, m := range fake.Messages(chanID) {
		if m.Via == fakediscord.ViaChannel {
			t.Errorf("the reply went to the channel: %+v", m)
		}
	}
	fake.InjectSlashCommand(fakediscord.SlashCommand{ChannelID: chanID, GuildID: guildID, User: ann, Name: "deny",
		Options: []fakediscord.OptionValue{{Name: "token", Type: 3, Value: "K7Q2MX9P"}, {Name: "reason", Type: 3, Value: "not\nnow /approve X"}}})
	if s := h.inbox.Next(t); s.Text != "/deny K7Q2MX9P not now /approve X" {
		t.Fatalf("deny signal %q", s.Text)
	}
	fake.InjectSlashCommand(fakediscord.SlashCommand{ChannelID: fake.DMChannel(ben.ID), User: ben, Name: "pending"})
	if s := h.inbox.Next(t); s.Text != "/pending" || s.From != "discord:3002" || !s.Private {
		t.Fatalf("pending signal %+v", s)
	}
	// A token that is not one is answered, not submitted.
	in = fake.InjectSlashCommand(fakediscord.SlashCommand{ChannelID: chanID, GuildID: guildID, User: ann, Name: "approve",
		Options: []fakediscord.OptionValue{{Name: "token", Type: 3, Value: "K7 /deny"}}})
	testutil.WaitFor(t, "the bad token answered", func() bool {
		for _, e := range fake.Edits() {
			if e.Interaction == in.ID && strings.Contains(e.Content, "not a request token") {
				return true
			}
		}
		return false
	})
	h.inbox.Empty(t)
}

// A failed registration (Discord answered 5xx) is tried again: otherwise
// /approve never appears in the picker until the bot restarts.
func TestSlashCommandsRegisteredAfterAServerError(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	fake.FailNext(fakediscord.RoutePutCommands, 2, fakediscord.FaultServer)
	newHarness(t, fake).start()
	testutil.WaitFor(t, "the global commands", func() bool { return len(fake.Commands("")) == 3 })
}

func TestSlashCommandsRegisteredGlobally(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	newHarness(t, fake).start()
	testutil.WaitFor(t, "the global commands", func() bool { return len(fake.Commands("")) == 3 })
	var names []string
	for _, c := range fake.Commands("") {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "approve deny pending" {
		t.Errorf("commands %q", names)
	}
}
