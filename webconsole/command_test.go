package webconsole

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestWebCommandLinks: a member who is not an approver gets no link; a
// link never goes to a group, only to a direct conversation (opened, or
// the one /web came in); /web signout ends every session of that person
// and is audited.
func TestWebCommandLinks(t *testing.T) {
	h := newHarness(t)
	group := core.Conversation{Gateway: "slack", Chat: "CDEV"}
	send := func(from core.Identity, text string, private bool, conv core.Conversation) []core.Action {
		n := len(h.chat.replies())
		if !h.c.HandleCommand(context.Background(), core.Signal{Kind: core.KindMessage, From: from, Text: text, Conv: conv, Private: private}) {
			t.Fatalf("%s was not handled", text)
		}
		return h.chat.replies()[n:]
	}
	if got := send(member, "/web", false, group); len(got) != 1 || linkRE.MatchString(got[0].Text) || !strings.Contains(got[0].Text, "Not authorised") {
		t.Errorf("a member's /web = %+v; want a refusal without a link", got)
	}
	h.chat.noDM[ann] = true
	if got := send(ann, "/web", false, group); len(got) != 1 || linkRE.MatchString(got[0].Text) || got[0].Conv != group {
		t.Errorf("/web in a group without a direct message = %+v; want no link", got)
	}
	dm := core.Conversation{Gateway: "slack", Chat: "DX"}
	if got := send(ann, "/web@gatehouse_bot", true, dm); len(got) != 1 || !linkRE.MatchString(got[0].Text) || got[0].Conv != dm {
		t.Errorf("/web in a direct conversation = %+v; want the link in place", got)
	}
	delete(h.chat.noDM, ann)
	got := send(ann, "/web", false, group)
	if len(got) != 2 || !linkRE.MatchString(got[0].Text) || got[0].Conv.Chat != "DUANN" || got[1].Conv != group || linkRE.MatchString(got[1].Text) {
		t.Errorf("/web in a group = %+v; want the link in the direct message and a word in the group", got)
	}
	if h.c.HandleCommand(context.Background(), core.Signal{Kind: core.KindMessage, From: ann, Text: "/webhooks", Conv: group}) {
		t.Error("/webhooks was taken for /web")
	}
	ck1, ck2, bobs := h.signIn(ann), h.signIn(ann), h.signIn(bob)
	if got := send(ann, "/web signout", false, group); len(got) != 1 || !strings.Contains(got[0].Text, "2 session(s) ended") {
		t.Errorf("/web signout = %+v; want 2 sessions ended", got)
	}
	for _, ck := range []*http.Cookie{ck1, ck2} {
		if res, _ := h.do(get("/web/", ck)); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("a session after /web signout = %d; want 401", res.StatusCode)
		}
	}
	if res, _ := h.do(get("/web/", bobs)); res.StatusCode != http.StatusOK {
		t.Errorf("another person's session after ann's signout = %d; want 200", res.StatusCode)
	}
	entries, _ := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "signed-out"})
	if len(entries) != 1 || entries[0].RequestedBy != ann {
		t.Errorf("audit of /web signout = %+v; want one entry", entries)
	}
}

// TestOnlyWhatThePersonMayApprove: bob, an approver of the ops profile,
// sees and is offered only the ops request.
func TestOnlyWhatThePersonMayApprove(t *testing.T) {
	h := newHarness(t)
	ck := h.signIn(bob)
	_, body := h.do(get("/web/", ck))
	if !strings.Contains(body, "OPSAAAAA") || strings.Contains(body, "K7Q2MX9P") {
		t.Errorf("bob's page shows other requests than the ops one:\n%s", body)
	}
	if res, _ := h.do(get("/web/r/K7Q2MX9P", ck)); res.StatusCode != http.StatusNotFound {
		t.Errorf("bob's page of a request he may not answer = %d; want 404", res.StatusCode)
	}
}
