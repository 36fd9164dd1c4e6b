package discord

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestStartThread: the headline is posted without pinging anyone and a
// thread started from it; the incident's conversation is the thread's
// channel, where a message without a mention reaches the bot and a reply
// goes.
func TestStartThread(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	fake.GuildChannel(chanID, guildID)
	h := newHarness(t, fake).start()
	conv, replyTo, err := h.gw.StartThread(t.Context(), core.Conversation{Gateway: Name, Chat: chanID}, "Webhook alerts: firing: <@3002> @everyone DiskFull\nmore")
	if err != nil {
		t.Fatal(err)
	}
	head := fake.Messages(chanID)
	if len(head) != 1 || head[0].AllowedMentions == nil || len(head[0].AllowedMentions.Parse) != 0 {
		t.Fatalf("headline %+v; want one that pings no one", head)
	}
	threads := fake.Threads()
	if len(threads) != 1 || threads[0].ID != head[0].ID || threads[0].Name != "Webhook alerts: firing: <@3002> @everyone DiskFull" {
		t.Fatalf("threads %+v; want one from the headline, named after its first line", threads)
	}
	if want := (core.Conversation{Gateway: Name, Chat: chanID, Thread: head[0].ID}); conv != want || replyTo != "" {
		t.Fatalf("conversation %s reply to %q; want %s", conv.Key(), replyTo, want.Key())
	}
	fake.InjectMessage(fakediscord.Message{ChannelID: head[0].ID, GuildID: guildID, Author: ann, Content: "what is full?"})
	if s := h.inbox.Next(t); s.Conv != conv || s.Text != "what is full?" {
		t.Fatalf("signal %+v; want the thread's message, without a mention, in %s", s, conv.Key())
	}
	fake.InjectMessage(inGuild(ann, "elsewhere, no mention")) // the channel itself still wants one
	if _, err := h.gw.Act(t.Context(), core.Action{Kind: core.ActionReply, Conv: conv, Text: "in the thread"}); err != nil {
		t.Fatal(err)
	}
	if got := fake.Messages(head[0].ID); len(got) != 1 || got[0].Content != "in the thread" {
		t.Fatalf("thread messages %+v", got)
	}
	fake.InjectMessage(inGuild(ann, mention(fake)+" marker"))
	if s := h.inbox.Next(t); s.Text != "marker" || s.Conv.Thread != "" {
		t.Fatalf("signal %+v; want only the mention, in the channel, not the unaddressed channel message", s)
	}
	// After a restart the thread's parent is asked of Discord.
	h.gw.parents = newChannelGuilds(16)
	fake.InjectMessage(fakediscord.Message{ChannelID: head[0].ID, GuildID: guildID, Author: ann, Content: "still there?"})
	if s := h.inbox.Next(t); s.Conv != conv {
		t.Fatalf("signal after a restart in %s; want %s", s.Conv.Key(), conv.Key())
	}
	if n := fake.Calls(fakediscord.RouteGetChannel); n != 1 {
		t.Errorf("GET /channels %d; want 1 (once, then remembered)", n)
	}
	// A button press in the thread is of its conversation too.
	if err := h.gw.PromptApproval(t.Context(), conv, "Approval needed: shell", core.ApprovalPrompt{Token: "K7Q2", Tool: "shell"}); err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages(head[0].ID)
	req := msgs[len(msgs)-1]
	buttons := fakediscord.Buttons(req.Components)
	if len(buttons) == 0 {
		t.Fatalf("the request in the thread has no buttons: %+v", req)
	}
	fake.InjectButtonPress(fakediscord.Press{ChannelID: head[0].ID, GuildID: guildID, MessageID: req.ID, User: ann, CustomID: buttons[0].CustomID})
	testutil.WaitFor(t, "the press", func() bool { return len(h.appr.Calls()) == 1 })
	if p := h.appr.Calls()[0]; p.Conv != conv {
		t.Errorf("the press is of %s; want %s", p.Conv.Key(), conv.Key())
	}
}

// TestStartThreadRefusedIsAReplyChain: Discord refuses the thread (no
// permission): the incident stays in the channel as a reply chain under
// its headline, and a reply there references it.
func TestStartThreadRefusedIsAReplyChain(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	fake.GuildChannel(chanID, guildID)
	h := newHarness(t, fake).start()
	fake.FailNext(fakediscord.RouteStartThread, 1, fakediscord.FaultForbidden)
	conv, replyTo, err := h.gw.StartThread(t.Context(), core.Conversation{Gateway: Name, Chat: chanID}, "Webhook alerts: firing")
	if err != nil {
		t.Fatal(err)
	}
	head := fake.Messages(chanID)
	if len(head) != 1 || conv.Chat != chanID || replyTo != head[0].ID || len(fake.Threads()) != 0 {
		t.Fatalf("conversation %s reply to %q, headlines %d; want the channel replying to the headline", conv.Key(), replyTo, len(head))
	}
	a := reply(chanID, "looked into it")
	a.ReplyTo = replyTo
	if _, err := h.gw.Act(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if got := fake.Messages(chanID); len(got) != 2 || got[1].Reference == nil || got[1].Reference.MessageID != head[0].ID {
		t.Fatalf("the reply %+v; want it to reference the headline", got[len(got)-1])
	}
}
