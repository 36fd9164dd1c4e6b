package webconsole

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestApprovedOnceNoAlwaysButtons: the form of a request approved only
// once (enable_skill, write_skill) offers Approve and Deny, not "Approve
// always" nor "Approve 30 min"; another request's form still does.
func TestApprovedOnceNoAlwaysButtons(t *testing.T) {
	h := newHarness(t)
	for i, tool := range []string{core.EnableSkillTool, core.WriteSkillTool} {
		h.appr.pending = append(h.appr.pending, record.Approval{Token: []string{"SKILLAAA", "SKILLBBB"}[i],
			Conv: core.Conversation{Gateway: "skills", Chat: "restart-billing"}, RequestedBy: member,
			Call: llm.ToolCall{Name: tool, Args: `{"name":"restart-billing"}`}, Rule: "skills",
			Created: h.now.Add(-3 * time.Minute), Expires: h.now.Add(12 * time.Minute), Status: record.StatusPending})
	}
	res, body := h.do(get("/web/", h.signIn(ann)))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pending page = %d %s", res.StatusCode, body)
	}
	form := func(token string) string {
		i := strings.Index(body, `action="`+PagePath(token)+`"`)
		if i < 0 {
			t.Fatalf("no form for %s:\n%s", token, body)
		}
		return body[i : i+strings.Index(body[i:], "</form>")]
	}
	for _, tok := range []string{"SKILLAAA", "SKILLBBB"} {
		if f := form(tok); !strings.Contains(f, "Approve</button>") || strings.Contains(f, "Approve always") || strings.Contains(f, "Approve 30 min") {
			t.Errorf("the form of %s offers always or a grant:\n%s", tok, f)
		}
	}
	if f := form("K7Q2MX9P"); !strings.Contains(f, "Approve always") {
		t.Errorf("a write_file request's form lost Approve always:\n%s", f)
	}
}
