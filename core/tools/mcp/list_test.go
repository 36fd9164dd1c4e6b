package mcp_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	fakemcp "github.com/gatehouse-bot/gatehouse/internal/fake/mcp"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestToolListIsCapped: a server's tools/list pages were followed for
// ever and every tool offered (50 pages of 2,000 tools: 100,000 tools,
// ~1 GB and a 49 MB request to the model on every turn). The pages read,
// the tools offered and their bytes are capped per server; the rest are
// left out with one warning.
func TestToolListIsCapped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      fakemcp.Options
		wantTools int // 0: at most MaxTools, within MaxToolBytes
	}{
		{"many tools on many pages", fakemcp.Options{Many: 300, PageSize: 50}, mcp.MaxTools},
		{"large tools", fakemcp.Options{Many: 60, ManyPad: 20 << 10}, 0},
		{"endless pages", fakemcp.Options{EndlessPages: true}, mcp.MaxListPages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lists atomic.Int64
			tc.opts.Workspace, tc.opts.Lists = t.TempDir(), &lists
			ts := httptest.NewServer(fakemcp.Handler(tc.opts, "", ""))
			t.Cleanup(ts.Close)
			r := start(t, tools.Options{}, mcp.ServerConfig{Name: "big", URL: ts.URL, StartTimeout: 20 * time.Second})
			testutil.WaitFor(t, "the server running", func() bool {
				return strings.HasPrefix(r.mgr.Statuses()[0].State, "running")
			})
			n, size := 0, 0
			for _, s := range r.reg.Specs() {
				if strings.HasPrefix(s.Name, "mcp__big__") {
					n++
					size += len(s.Name) + len(s.Description) + len(s.Parameters)
				}
			}
			if n > mcp.MaxTools || size > mcp.MaxToolBytes || (tc.wantTools != 0 && n != tc.wantTools) {
				t.Errorf("%d tools of %d bytes offered; want %d (at most %d of %d bytes)", n, size, tc.wantTools, mcp.MaxTools, mcp.MaxToolBytes)
			}
			if l := lists.Load(); l > mcp.MaxListPages {
				t.Errorf("%d pages listed, want at most %d", l, mcp.MaxListPages)
			}
			if c := strings.Count(r.log.String(), "over the server's caps"); c != 1 {
				t.Errorf("%d warnings of the caps, want 1:\n%s", c, r.log.String())
			}
		})
	}
}

// TestToolListChangesAreListedAtMostOnceASecond: a server notifying
// tools/list_changed without pause (50 times in a second) was listed
// again for each notification; now at most once a RefreshEvery, every
// change still offered in the end.
func TestToolListChangesAreListedAtMostOnceASecond(t *testing.T) {
	var lists atomic.Int64
	opts := fakemcp.Options{Workspace: t.TempDir(), Lists: &lists, Churn: true}
	ts := httptest.NewServer(fakemcp.Handler(opts, "", ""))
	t.Cleanup(ts.Close)
	r := start(t, tools.Options{}, mcp.ServerConfig{Name: "churny", URL: ts.URL})
	r.waitTool(t, "mcp__churny__churn")
	before, began := lists.Load(), time.Now()
	const n = 50
	if res := r.act(t, "mcp__churny__churn", `{"n":50}`); res.Failed {
		t.Fatalf("churn = %+v", res)
	}
	r.waitTool(t, fmt.Sprintf("mcp__churny__churn%d", n-1))
	listed, took := lists.Load()-before, time.Since(began)
	// One listing for the first notification, one a RefreshEvery after
	// each listing since, and the one under way.
	if most := 2 + int64(took/mcp.RefreshEvery); listed > most {
		t.Errorf("listed %d times in %v for %d changes; want at most %d (one a %v)", listed, took.Round(time.Millisecond), n, most, mcp.RefreshEvery)
	}
}
