package discord

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// recordRT records the URL and Host of each request.
type recordRT struct{ got []*http.Request }

func (r *recordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}}, nil
}

func TestRewriterAppliesAPIURLAndGatewayURL(t *testing.T) {
	rec := &recordRT{}
	rw, err := newRewriter("http://127.0.0.1:8080/proxy/", "ws://gw.example:9/ws", rec)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://discord.com/api/v9/channels/1/messages", nil)
	if _, err := rw.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	got := rec.got[0]
	if got.URL.String() != "http://127.0.0.1:8080/proxy/api/v9/channels/1/messages" || got.Host != "127.0.0.1:8080" {
		t.Errorf("rewritten to %s (Host %s)", got.URL, got.Host)
	}
	if req.URL.Host != "discord.com" {
		t.Error("the caller's request was modified")
	}
	gw, _ := http.NewRequest(http.MethodGet, "https://discord.com/api/v9/gateway", nil)
	resp, err := rw.RoundTrip(gw)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != `{"url":"ws://gw.example:9/ws"}` || len(rec.got) != 1 {
		t.Errorf("gateway answer %s; %d requests made", body, len(rec.got))
	}
	// The default API goes untouched.
	rw, _ = newRewriter(DefaultAPIURL, "", rec)
	req, _ = http.NewRequest(http.MethodGet, "https://discord.com/api/v9/users/@me", nil)
	if _, err := rw.RoundTrip(req); err != nil || rec.got[1].URL.Host != "discord.com" {
		t.Errorf("default API rewritten: %v %s", err, rec.got[1].URL)
	}
	if _, err := newRewriter("ftp://x", "", rec); err == nil {
		t.Error("an ftp api_url was accepted")
	}
}

func TestWrongTokenErrorHoldsNoToken(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	defer fake.Close()
	logs := &testutil.SyncBuffer{}
	cfg := FastConfig(fake)
	cfg.Token = "WRONG.TEST-discord-token-never-logged"
	_, err := New(context.Background(), cfg, Deps{Log: zerolog.New(logs)})
	if err == nil {
		t.Fatal("a wrong token was accepted")
	}
	if strings.Contains(err.Error(), "TEST-discord-token") || strings.Contains(logs.String(), "TEST-discord-token") {
		t.Fatalf("the token leaked: %v\n%s", err, logs.String())
	}
}

func TestPerRouteBucketsHonoured(t *testing.T) {
	fake := newFake(fakediscord.Options{RateLimit: fakediscord.RateLimit{Limit: 3, Window: 200 * time.Millisecond}})
	h := newHarness(t, fake)
	for i := range 8 {
		if _, err := h.gw.Act(t.Context(), reply(chanID, "burst "+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fake.Messages(chanID)); n != 8 {
		t.Fatalf("%d of 8 delivered", n)
	}
	// discordgo learns each bucket from the X-RateLimit headers and waits
	// for its reset: nothing goes over the limit.
	if n := fake.OverLimit(); n != 0 {
		t.Errorf("%d requests went over a bucket's limit", n)
	}
	if n := fake.Early(); n != 0 {
		t.Errorf("%d requests came before a retry_after had passed", n)
	}
}

func TestSectionCheckAndDoctor(t *testing.T) {
	s := NewSection()
	if st := s.Doctor(); st.Runs || !strings.Contains(st.Lines[0], "disabled") {
		t.Errorf("doctor without a token: %+v", st)
	}
	s.Token = confkit.Secret("tok-123")
	s.AllowList = []string{"discord:3001"}
	s.GuildID = "5001"
	st := s.Doctor()
	if want := "discord: enabled; guild channels: mention; who may talk: discord:3001; slash commands in guild 5001"; !st.Runs || st.Lines[0] != want {
		t.Errorf("doctor %+v, want %q", st, want)
	}
	if len(s.Warnings()) != 0 {
		t.Errorf("warnings %q", s.Warnings())
	}
	if _, err := (Config{Token: "x", Guild: "some"}).withDefaults(); err == nil {
		t.Error("guild: some was accepted")
	}
}

func TestCommandText(t *testing.T) {
	if _, problem := commandText(slashData("approve", "token", "K7 Q2")); problem == "" {
		t.Error("a token with a space was accepted")
	}
	if _, problem := commandText(slashData("rm")); !strings.Contains(problem, "Unknown command /rm") {
		t.Errorf("unknown command: %q", problem)
	}
	if text, _ := commandText(slashData("approve", "token", "K7Q2", "always", false)); text != "/approve K7Q2" {
		t.Errorf("always false: %q", text)
	}
}

// slashData builds a command's data from name/value pairs.
func slashData(name string, kv ...any) discordgo.ApplicationCommandInteractionData {
	d := discordgo.ApplicationCommandInteractionData{Name: name}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Options = append(d.Options, &discordgo.ApplicationCommandInteractionDataOption{Name: kv[i].(string), Value: kv[i+1]})
	}
	return d
}
