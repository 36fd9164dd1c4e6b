package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestConfigErrorsHelpAFirstTimer: the errors a first configuration runs
// into say how to fix it, and still name the key: an unknown key
// suggests the nearest known one (only when it is close), a duration
// without a unit says it needs one, and a missing file names -config.
func TestConfigErrorsHelpAFirstTimer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, want, not string
	}{
		{"near key", "llm:\n  max_step: 5\n", "llm.max_step: unknown key; did you mean max_steps?", ""},
		{"near gateway", "gateways:\n  telegarm: {token: x}\n", "gateways.telegarm: unknown key; did you mean telegram?", ""},
		{"far key", "llm:\n  frobnicate: 5\n", "llm.frobnicate: unknown key", "did you mean"},
		{"duration without unit", "hitl:\n  ttl: 15\n", `hitl.ttl: bad duration "15": a duration needs a unit, e.g. 15m`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", tc.yaml+"store: {dsn: gatehouse.db}\nhttp: {listen: \"\"}\n")
			r := runOnce(t, dir, baseEnv(dir), "", "doctor")
			if r.code != exitConfig || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitConfig, tc.want)
			}
			if tc.not != "" && strings.Contains(r.stderr, tc.not) {
				t.Errorf("stderr %q says %q: the suggestion is too far to help", r.stderr, tc.not)
			}
		})
	}
	t.Run("no file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for _, sub := range [][]string{{}, {"doctor"}} {
			r := runOnce(t, dir, baseEnv(dir), "", sub...)
			if want := "config.yaml: no such file; pass -config PATH"; r.code != exitConfig || !strings.Contains(r.stderr, want) {
				t.Errorf("bot %v without config.yaml: exit %d, stderr %q; want %d and %q", sub, r.code, r.stderr, exitConfig, want)
			}
		}
	})
}

// TestDoctorWarningsAreNotProblems: what the bot runs with — an MCP
// server that fails to start, an LLM provider doctor --online cannot
// reach — is a warning: doctor lists it apart from the problems and exits
// 0. A missing gateway is still a problem (exit 1), listed as one.
func TestDoctorWarningsAreNotProblems(t *testing.T) {
	t.Parallel()
	bin := fakeMCP(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", `llm:
  providers:
    - {name: gone, base_url: "http://127.0.0.1:1/v1", api_key: sk-firstday-0123456789}
mcp:
  servers:
    - {name: broken, command: "`+bin+`", env: {FAKE_MCP_FAIL_START: "1"}}
store: {dsn: gatehouse.db}
http: {listen: ""}
`)
	r := runOnce(t, dir, baseEnv(dir), "", "doctor", "--online")
	if r.code != exitOK {
		t.Fatalf("bot doctor --online: exit %d; want 0 (warnings only)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	warnings := doctorSummary(r.stdout, "warnings")
	for _, want := range []string{"mcp: broken (stdio", "online: llm gone: GET http://127.0.0.1:1/v1/models failed after"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("doctor's warnings lack %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "PROBLEM") || strings.Contains(r.stdout, "cannot run") || doctorSummary(r.stdout, "problems") != "" {
		t.Errorf("doctor calls a warning a problem:\n%s", r.stdout)
	}
	if !regexp.MustCompile("ready: `bot` will run as shown, with [0-9]+ warning\\(s\\) above.").MatchString(r.stdout) {
		t.Errorf("doctor does not say the bot runs, with its warnings:\n%s", r.stdout)
	}

	writeFile(t, dir, "config.yaml", "gateways:\n  console: {enabled: false}\nmcp:\n  servers:\n    - {name: broken, command: \""+bin+"\", env: {FAKE_MCP_FAIL_START: \"1\"}}\nhttp: {listen: \"\"}\n")
	r = runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitFail || !strings.Contains(doctorSummary(r.stdout, "problems"), "gateways: no gateway is enabled") ||
		strings.Contains(doctorSummary(r.stdout, "problems"), "broken") || !strings.Contains(doctorSummary(r.stdout, "warnings"), "broken") {
		t.Errorf("bot doctor with no gateway and a broken MCP server: exit %d; want %d, one problem and one warning\n%s", r.code, exitFail, r.stdout)
	}
}

// doctorSummary returns the block of doctor's summary that starts with
// head ("problems", "warnings"): its indented lines.
func doctorSummary(out, head string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, head+" "):
			in = true
		case in && strings.HasPrefix(l, "  "):
			b.WriteString(strings.TrimSpace(l) + "\n")
		default:
			in = false
		}
	}
	return b.String()
}

// TestDoctorOnlineWithNothingToContact: the shipped configuration (demo
// model, console) has nothing to reach: doctor --online says so instead
// of printing nothing.
func TestDoctorOnlineWithNothingToContact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", defaultConfig(t))
	r := runOnce(t, dir, baseEnv(dir), "", "doctor", "--online")
	if r.code != exitOK || !strings.Contains(r.stdout, "online    nothing to contact:") {
		t.Errorf("bot doctor --online: exit %d; want 0 and a line saying there is nothing to contact\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDoctorListsBudgets: doctor shows the daily caps, and says when
// there are none.
func TestDoctorListsBudgets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", defaultConfig(t))
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if got := doctorBlock(r.stdout, "budget"); r.code != exitOK || len(got) != 1 || !strings.Contains(got[0], "no daily caps") {
		t.Errorf("doctor's budget lines %q; want one saying there are no caps\n%s", got, r.stdout)
	}
	writeFile(t, dir, "config.yaml", `llm:
  providers:
    - {name: p, base_url: "http://127.0.0.1:1/v1", api_key: sk-firstday-0123456789, price: {input_per_mtok: 0.15, output_per_mtok: 0.6}}
budget: {conversation_daily_tokens: 200000, daily_tokens: 2000000, daily_usd: 5}
store: {dsn: gatehouse.db}
http: {listen: ""}
`)
	r = runOnce(t, dir, baseEnv(dir), "", "doctor")
	want := "budget    daily caps (UTC days): conversation_daily_tokens 200000 tokens, daily_tokens 2000000 tokens, daily_usd $5.00"
	if r.code != exitOK || !strings.Contains(r.stdout, want) {
		t.Errorf("bot doctor: exit %d; want a line %q\n%s", r.code, want, r.stdout)
	}
}

// A Telegram bot token's shape (digits:35 characters) and Slack's (xoxb-,
// xapp-): the tests' tokens that doctor accepts.
const (
	shapedTelegramToken = "123456789:AAFirstDayFirstDayFirstDayFirstDay0"
	shapedSlackBot      = "xoxb-1-firstday-slack-bot-token"
	shapedSlackApp      = "xapp-1-A0FIRST-firstday-slack-app-token"
)

// TestDemoModelSpendsNoBudget: the offline demo model calls no API, so its
// answers count no tokens: with a daily cap of one token the demo still
// answers turn after turn.
func TestDemoModelSpendsNoBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := strings.NewReplacer("conversation_daily_tokens: 0", "conversation_daily_tokens: 1", "  daily_tokens: 0", "  daily_tokens: 1").Replace(defaultConfig(t))
	writeFile(t, dir, "config.yaml", cfg)
	r := runOnce(t, dir, baseEnv(dir), "hello\nhello again\n")
	if r.code != exitOK {
		t.Fatalf("bot: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "budget") || strings.Count(r.stdout, "offline demo model") != 2 {
		t.Errorf("the demo's answers counted against the budget; want two answers and no budget refusal:\n%s", r.stdout)
	}
}

// TestFirstSuggestionsWorkOnAFreshCheckout: on a fresh checkout (the
// shipped config, no workspace yet) every request the demo model suggests
// works when tried in the order it lists them, held ones approved; and
// the README suggests the same requests in the same order. (Not "fetch
// https://example.com": the tests have no internet.)
func TestFirstSuggestionsWorkOnAFreshCheckout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	p := startBot(t, dir, baseEnv(dir))
	p.send("hello")
	can := expectLine(t, p, "Things I can do:")
	var suggested []string
	for _, m := range regexp.MustCompile(`“([^”]+)”`).FindAllStringSubmatch(can, -1) {
		suggested = append(suggested, m[1])
	}
	if len(suggested) < 4 {
		t.Fatalf("the demo suggests %q", suggested)
	}
	for _, s := range suggested {
		if strings.HasPrefix(s, "fetch ") {
			continue
		}
		p.send(s)
		answer := expectLine(t, p, "gatehouse › ")
		if strings.Contains(answer, "Approval needed") {
			p.send("/approve " + expectToken(t, p))
			answer = expectLine(t, p, "The request was approved")
		}
		if strings.Contains(answer, "failed") || strings.Contains(answer, "error") {
			t.Errorf("%q on a fresh checkout: %s", s, answer)
		}
	}
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile("(?s)Type (.*?) at the `you ›` prompt").FindSubmatch(readme)
	if first == nil {
		t.Fatal("the README no longer suggests first requests (\"Type … at the `you ›` prompt\"); update this test")
	}
	var inReadme []string
	for _, m := range regexp.MustCompile("``? ?(.+?) ?``?(?:,| or| \\(|$)").FindAllStringSubmatch(strings.Join(strings.Fields(string(first[1])), " "), -1) {
		inReadme = append(inReadme, m[1])
	}
	want := slices.DeleteFunc(slices.Clone(suggested), func(s string) bool { return !slices.Contains(inReadme, s) })
	if len(inReadme) < 4 || !slices.Equal(inReadme, want) {
		t.Errorf("the README suggests %q; want requests the demo suggests, in its order %q", inReadme, suggested)
	}
}

// TestLogDurationsCarryUnits: a duration in a log line says its unit
// ("retry_in":"1s"); zerolog's default wrote a bare number of
// milliseconds ("retry_in":1000).
func TestLogDurationsCarryUnits(t *testing.T) {
	t.Parallel()
	bin := fakeMCP(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t)+`
mcp:
  servers:
    - {name: broken, command: "`+bin+`", env: {FAKE_MCP_FAIL_START: "1"}}
`) // its log: auto, so JSON on the pipe
	p := startBot(t, dir, baseEnv(dir))
	var line string
	testutil.WaitFor(t, "the log line of the MCP server that failed to start", func() bool {
		for _, l := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(l, "mcp server failed to start") {
				line = l
				return true
			}
		}
		return false
	})
	p.closeInput()
	p.wait()
	var fields map[string]any
	if err := json.Unmarshal([]byte(line), &fields); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	d, ok := fields["retry_in"].(string)
	if !ok {
		t.Fatalf("retry_in = %#v in %s; want a duration with its unit, such as \"1s\"", fields["retry_in"], line)
	}
	if _, err := time.ParseDuration(d); err != nil {
		t.Errorf("retry_in = %q: %v", d, err)
	}
}

// TestReadmeSaysHowToBuildBot: every command the README documents is the
// `bot` binary; it says how to build it (go build -o bot ./cmd/bot)
// before the first of them, and that command, run from the checkout,
// builds a working bot. The README's first two commands stay as they are.
func TestReadmeSaysHowToBuildBot(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	first := "```sh\ngo run ./cmd/bot          # run the bot: console chat + offline demo model, no keys needed\ngo test -race ./...       # run every test\n```"
	if !strings.Contains(readme, first) {
		t.Errorf("the README's first two commands changed; want\n%s", first)
	}
	build := regexp.MustCompile("(?m)^(go build -o bot ./cmd/bot)\\b").FindStringIndex(readme)
	use := strings.Index(readme, "`bot ")
	if build == nil || use < 0 || build[0] > use {
		t.Fatalf("the README does not say `go build -o bot ./cmd/bot` before its first bot command (at byte %d)", use)
	}
	dir := t.TempDir()
	cmd := exec.Command(goTool(), "build", "-o", filepath.Join(dir, "bot"), "./cmd/bot")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -o bot ./cmd/bot from the checkout: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(dir, "bot"), "version").Output(); err != nil || !strings.HasPrefix(string(out), "gatehouse ") {
		t.Errorf("the built bot version: %q, %v", out, err)
	}
}

// TestDoctorListsPeople: hitl.people decides who counts as one person
// for four-eyes, so doctor shows the groups beside the approvers.
func TestDoctorListsPeople(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", `hitl:
  approvers: [console:local, "telegram:42"]
  allow_self_approval: false
  people: [[console:local, "telegram:42"]]
store: {dsn: gatehouse.db}
http: {listen: ""}
`)
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	want := "people (each one person to four-eyes): console:local = telegram:42"
	if r.code != exitOK || !strings.Contains(r.stdout, want) {
		t.Errorf("bot doctor: exit %d; want a line %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}
