package discord

import (
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
)

// TestDirectConversation: an escalated request's direct message is the
// DM channel Discord opens (POST /users/@me/channels), the same every
// time; an identity of another gateway or not a user id is refused
// without a call.
func TestDirectConversation(t *testing.T) {
	h := newHarness(t, newFake(fakediscord.Options{})).start()
	ctx := context.Background()
	c, err := h.gw.DirectConversation(ctx, "discord:80351110224678912")
	if err != nil {
		t.Fatalf("DirectConversation: %v", err)
	}
	if want := h.fake.DMChannel("80351110224678912"); c.Gateway != Name || c.Chat != want || c.Thread != "" {
		t.Errorf("direct conversation = %+v; want discord:%s", c, want)
	}
	for _, id := range []string{"slack:U0ONCALL", "discord:", "discord:12ab"} {
		if _, err := h.gw.DirectConversation(ctx, core.Identity(id)); err == nil {
			t.Errorf("DirectConversation(%q) succeeded; want an error", id)
		}
	}
}
