package core_test

import (
	"context"
	"testing"
)

// TestStrangersWhoAmIIsAnsweredOnceAMinute: a stranger's /whoami is
// answered with their identity alone, before the allow list; asked again at
// once it is not answered again (a stranger cannot make the bot spam), and
// the approver's next command is answered next.
func TestStrangersWhoAmIIsAnsweredOnceAMinute(t *testing.T) {
	h, _ := brokerHarness(t, harnessOpts{allow: []string{}})
	h.sayAs(t, "test:stranger", "c9", "/whoami")
	if got := h.gw.next(t).Text; got != "Your identity is test:stranger." {
		t.Fatalf("a stranger's /whoami was answered %q", got)
	}
	h.sayAs(t, "test:stranger", "c9", "/whoami")
	h.sayAs(t, "test:boss", "c9", "/whoami")
	if got := h.gw.next(t).Text; got != "Your identity is test:boss." {
		t.Fatalf("next reply = %q; want the approver's /whoami (a stranger's is answered once a minute)", got)
	}
	if err := h.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake().Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}
