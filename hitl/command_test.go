package hitl

import (
	"strings"
	"testing"
	"time"
)

func TestParseCommand(t *testing.T) {
	const tok = "K7Q2MX9P"
	type want struct {
		ok      bool
		verb    Verb
		token   string
		always  bool
		reason  string
		rule    int64
		problem bool
	}
	cmd := func(v Verb, token string) want { return want{ok: true, verb: v, token: token} }
	for _, c := range []struct {
		in   string
		want want
	}{
		{"/approve K7Q2MX9P", cmd(VerbApprove, tok)},
		{"/approve k7q2mx9p", cmd(VerbApprove, tok)},
		{"/approve k7q2-mx9p", cmd(VerbApprove, tok)},
		{"/approve K7Q2 MX9P", cmd(VerbApprove, tok)},
		{"  /approve    K7Q2MX9P   ", cmd(VerbApprove, tok)},
		{"/APPROVE K7Q2MX9P", cmd(VerbApprove, tok)},
		{"/Approve\tK7Q2MX9P\n", cmd(VerbApprove, tok)},
		{"/approve@GatehouseBot K7Q2MX9P", cmd(VerbApprove, tok)},
		{"@GatehouseBot /approve K7Q2MX9P", cmd(VerbApprove, tok)},
		{"<@U0123ABCD> approve K7Q2MX9P", cmd(VerbApprove, tok)},
		{"<@U0123ABCD|gatehouse>: approve K7Q2MX9P", cmd(VerbApprove, tok)},
		{"<@80351110224678912> /approve K7Q2MX9P", cmd(VerbApprove, tok)},
		{"<@!80351110224678912> /approve k7q2-mx9p", cmd(VerbApprove, tok)},
		{"approve K7Q2MX9P", cmd(VerbApprove, tok)},
		{"Approve k7q2-mx9p", cmd(VerbApprove, tok)},
		{"/approve K7Q2MX9P always", want{ok: true, verb: VerbApprove, token: tok, always: true}},
		{"/approve k7q2-mx9p ALWAYS", want{ok: true, verb: VerbApprove, token: tok, always: true}},
		{"approve K7Q2MX9P always", want{ok: true, verb: VerbApprove, token: tok, always: true}},
		{"/deny K7Q2MX9P", cmd(VerbDeny, tok)},
		{"/deny K7Q2MX9P too risky", want{ok: true, verb: VerbDeny, token: tok, reason: "too risky"}},
		{"deny k7q2-mx9p   not on a friday ", want{ok: true, verb: VerbDeny, token: tok, reason: "not on a friday"}},
		{"/deny@bot K7Q2MX9P no", want{ok: true, verb: VerbDeny, token: tok, reason: "no"}},
		{"/pending", cmd(VerbPending, "")},
		{"/pending@GatehouseBot", cmd(VerbPending, "")},
		{"pending", cmd(VerbPending, "")},
		{"<@U1> pending", cmd(VerbPending, "")},
		{"/show K7Q2MX9P", cmd(VerbShow, tok)},
		{"show k7q2-mx9p", cmd(VerbShow, tok)},
		{"/rules", cmd(VerbRules, "")},
		{"/unallow 3", want{ok: true, verb: VerbUnallow, rule: 3}},
		{"/unallow #12", want{ok: true, verb: VerbUnallow, rule: 12}},
		{"unallow 2", want{ok: true, verb: VerbUnallow, rule: 2}},

		// A verb with a missing or malformed argument still parses when
		// it is clearly a command (slash or mention), for a usage reply.
		{"/approve", want{ok: true, verb: VerbApprove, problem: true}},
		{"/approve   ", want{ok: true, verb: VerbApprove, problem: true}},
		{"/approve XYZ", want{ok: true, verb: VerbApprove, problem: true}},
		{"/approve K7Q2MX0P", want{ok: true, verb: VerbApprove, problem: true}},
		{"/approve K7Q2MX9P alwyas", want{ok: true, verb: VerbApprove, token: tok, problem: true}},
		{"/approve always K7Q2MX9P", want{ok: true, verb: VerbApprove, problem: true}},
		{"/deny", want{ok: true, verb: VerbDeny, problem: true}},
		{"/show", want{ok: true, verb: VerbShow, problem: true}},
		{"/pending now", want{ok: true, verb: VerbPending, problem: true}},
		{"/unallow", want{ok: true, verb: VerbUnallow, problem: true}},
		{"/unallow x", want{ok: true, verb: VerbUnallow, problem: true}},
		{"/unallow 0", want{ok: true, verb: VerbUnallow, problem: true}},
		{"@bot approve the plan", want{ok: true, verb: VerbApprove, problem: true}},

		// Plain chat is never a command.
		{"I approve of this plan", want{}},
		{"approve it please", want{}},
		{"approve", want{}},
		{"Approve everything", want{}},
		{"deny", want{}},
		{"deny all knowledge", want{}},
		{"pending approvals?", want{}},
		{"show me the logs", want{}},
		{"rules are rules", want{}},
		{"approved K7Q2MX9P", want{}},
		{"please /approve K7Q2MX9P", want{}},
		{"/approver K7Q2MX9P", want{}},
		{"/help", want{}},
		{"", want{}},
		{"   ", want{}},
		{"@bot", want{}},
		{"@bot I approve", want{}},
		{"/", want{}},
		{"/@bot", want{}},
	} {
		got, ok := ParseCommand(c.in)
		w := c.want
		if ok != w.ok || got.Verb != w.verb || got.Token != w.token || got.Always != w.always ||
			got.Reason != w.reason || got.Rule != w.rule || (got.Problem != "") != w.problem {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %+v", c.in, got, ok, w)
		}
	}
}

func TestParseCommandProblemText(t *testing.T) {
	for in, want := range map[string]string{
		"/approve":                             "missing token",
		"/approve XYZ":                         `"XYZ" is not a token`,
		"/unallow nine":                        `"nine" is not a rule number`,
		"/show K7Q2MX9P x":                     `unexpected "x"`,
		"/pending please":                      `unexpected "please"`,
		"/approve " + strings.Repeat("Q", 100): "…",
	} {
		got, ok := ParseCommand(in)
		if !ok || !strings.Contains(got.Problem, want) {
			t.Errorf("ParseCommand(%q).Problem = %q, want it to contain %q", in, got.Problem, want)
		}
	}
}

// TestParseCommandGrant: "/approve TOKEN for D" with D from 1m to 24h;
// anything else is a problem that gives the range.
func TestParseCommandGrant(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"/approve K7Q2MX9P for 30m":      30 * time.Minute,
		"/approve k7q2-mx9p FOR 2H":      2 * time.Hour,
		"approve K7Q2MX9P for 1m":        time.Minute,
		"<@U1> approve K7Q2MX9P for 24h": 24 * time.Hour,
		"/approve K7Q2MX9P for 1h30m":    90 * time.Minute,
	} {
		got, ok := ParseCommand(in)
		if !ok || got.Verb != VerbApprove || got.Token != "K7Q2MX9P" || got.For != want || got.Always || got.Problem != "" {
			t.Errorf("ParseCommand(%q) = %+v, %v; want a grant of %s", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"/approve K7Q2MX9P for", "/approve K7Q2MX9P for 59s", "/approve K7Q2MX9P for 24h1s",
		"/approve K7Q2MX9P for 0", "/approve K7Q2MX9P for -30m", "/approve K7Q2MX9P for 1d",
		"/approve K7Q2MX9P for lunch", "/approve K7Q2MX9P for 30m always", "/approve K7Q2MX9P always for 30m",
		"/approve K7Q2MX9P for 30m 2h",
	} {
		got, ok := ParseCommand(in)
		if !ok || got.Problem == "" || got.For != 0 || got.Always {
			t.Errorf("ParseCommand(%q) = %+v, %v; want a problem", in, got, ok)
		}
		if strings.Contains(in, "for 30m") {
			continue
		}
		if !strings.Contains(got.Problem, "from 1m to 24h") {
			t.Errorf("ParseCommand(%q).Problem = %q, want the range", in, got.Problem)
		}
	}
	// Without slash or mention, only the exact shape is a command.
	for _, in := range []string{"approve K7Q2MX9P for lunch", "approve K7Q2MX9P for 5s"} {
		if got, ok := ParseCommand(in); ok {
			t.Errorf("ParseCommand(%q) = %+v, want no command", in, got)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"/approve K7Q2MX9P", "/approve@Bot k7q2-mx9p always", "<@U1> deny K7Q2MX9P no way",
		"@bot /pending", "show K7Q2 MX9P", "/unallow #3", "I approve of this plan", "/approve",
		"<@>", "/deny K7Q2MX9P \xff\xfe", "approve\u00a0K7Q2MX9P", "/approve K7Q2–MX9P",
		"/approve K7Q2MX9P for 30m", "approve K7Q2MX9P for 24h", "/approve K7Q2MX9P for 9223372036854775807ns",
		"/approve K7Q2MX9P for 1e3m", "/approve K7Q2MX9P for .5h", "/approve K7Q2MX9P for 30m always",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cmd, ok := ParseCommand(in)
		again, ok2 := ParseCommand(in)
		if ok != ok2 || cmd != again {
			t.Fatalf("not deterministic: %+v/%v vs %+v/%v", cmd, ok, again, ok2)
		}
		if !ok {
			if cmd != (Command{}) {
				t.Fatalf("not a command but returned %+v", cmd)
			}
			return
		}
		if !verbs[cmd.Verb] {
			t.Fatalf("unknown verb %q", cmd.Verb)
		}
		if cmd.Token != "" {
			if norm, valid := NormalizeToken(cmd.Token); !valid || norm != cmd.Token {
				t.Fatalf("token %q not normalised", cmd.Token)
			}
		}
		if cmd.Always && (cmd.Verb != VerbApprove || cmd.Token == "" || cmd.Problem != "") {
			t.Fatalf("always on %+v", cmd)
		}
		if cmd.For != 0 && (cmd.Verb != VerbApprove || cmd.Token == "" || cmd.Problem != "" || cmd.Always ||
			cmd.For < MinGrant || cmd.For > MaxGrant) {
			t.Fatalf("grant on %+v", cmd)
		}
		if cmd.Reason != "" && (cmd.Verb != VerbDeny || cmd.Token == "") {
			t.Fatalf("reason on %+v", cmd)
		}
		needsToken := cmd.Verb == VerbApprove || cmd.Verb == VerbDeny || cmd.Verb == VerbShow
		if cmd.Problem == "" && needsToken && cmd.Token == "" {
			t.Fatalf("no problem but no token: %+v", cmd)
		}
		if cmd.Problem == "" && cmd.Verb == VerbUnallow && cmd.Rule <= 0 {
			t.Fatalf("no problem but no rule: %+v", cmd)
		}
		if cmd.Problem != "" && !strings.ContainsAny(in, "/@") {
			t.Fatalf("malformed command accepted without slash or mention: %q -> %+v", in, cmd)
		}
	})
}
