package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	"github.com/gatehouse-bot/gatehouse/internal/dotenv"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// llmEnv is the variable that holds the provider's key, as the shipped
// configuration names it.
const llmEnv = "OPENAI_API_KEY"

// llmChoice is the provider bot init writes.
type llmChoice struct {
	name, baseURL, model string
}

// llmPresets are the providers bot init offers, the first the default.
var llmPresets = []struct {
	label string
	llmChoice
}{
	{"OpenAI", llmChoice{"openai", "https://api.openai.com/v1", "gpt-4o-mini"}},
	{"OpenRouter", llmChoice{"openrouter", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini"}},
	{"a local server (Ollama; llama.cpp: http://localhost:8080/v1)", llmChoice{"local", "http://localhost:11434/v1", "llama3.2"}},
	{"none for now: the offline demo model", llmChoice{"openai", "https://api.openai.com/v1", "gpt-4o-mini"}},
}

// demoPreset is the index of the "none" choice.
const demoPreset = 3

// askLLM asks for the provider, its base URL, model and key (hidden),
// and checks the key online where the server answers.
func askLLM(ctx context.Context, p *prompter, f initFlags, plan *initPlan) error {
	choice := llmPresets[0].llmChoice
	preset := 0
	if f.llmBaseURL == "" && !p.yes {
		var lines []string
		for i, pr := range llmPresets {
			lines = append(lines, fmt.Sprintf("%d) %s", i+1, pr.label))
		}
		for {
			a, err := p.ask("LLM provider: "+strings.Join(lines, ", "), "1")
			if err != nil {
				return err
			}
			if n := strings.TrimSpace(a); len(n) == 1 && n[0] >= '1' && int(n[0]-'1') < len(llmPresets) {
				preset = int(n[0] - '1')
				break
			}
			p.say("  Answer 1 to %d.", len(llmPresets))
		}
		choice = llmPresets[preset].llmChoice
	}
	if preset == demoPreset {
		plan.llm = choice
		p.say("  The bot runs the offline demo model until %s is set in .env (or the environment).", llmEnv)
		return nil
	}
	if f.llmBaseURL != "" {
		choice.baseURL, choice.name = f.llmBaseURL, providerName(f.llmBaseURL)
		choice.model = defaultModel(choice.name)
	} else if !p.yes {
		u, err := p.askPlain("Base URL of the OpenAI-compatible API", choice.baseURL)
		if err != nil {
			return err
		}
		if u != choice.baseURL {
			choice.baseURL, choice.name = u, providerName(u)
		}
	}
	if f.llmModel != "" {
		choice.model = f.llmModel
	} else if !p.yes {
		m, err := p.askPlain("Model", choice.model)
		if err != nil {
			return err
		}
		choice.model = m
	}
	plan.llm = choice
	key, err := p.secret("API key (a local server needs none)", llmEnv, initEnv(llmEnv))
	if err != nil {
		return err
	}
	if key != "" {
		plan.secrets = append(plan.secrets, dotenv.Entry{Name: llmEnv, Value: key})
	}
	prov := config.Provider{Name: choice.name, BaseURL: choice.baseURL, APIKey: confkit.Secret(key), Model: choice.model}
	if why := app.ProviderSkipped(prov); why != "" {
		p.say("  %s: the bot runs the offline demo model until %s is set in .env (or the environment).", why, llmEnv)
		return nil
	}
	sec := secrets.New(key)
	took, err := getModels(ctx, &http.Client{Timeout: onlineTimeout}, prov)
	if err != nil {
		p.say("  Could not check it now (GET /models failed after %s: %s); it is kept: `bot doctor -online` checks it again.", took, sec.Redact(err.Error()))
		return nil
	}
	p.say("  Checked: GET /models ok in %s.", took)
	return nil
}

func initEnv(name string) string { return strings.TrimSpace(os.Getenv(name)) }

// providerName names a provider by its base URL's host.
func providerName(base string) string {
	u, err := url.Parse(base)
	host := ""
	if err == nil {
		host = u.Hostname()
	}
	switch {
	case strings.HasSuffix(host, "openai.com"):
		return "openai"
	case strings.HasSuffix(host, "openrouter.ai"):
		return "openrouter"
	case app.ProviderSkipped(config.Provider{BaseURL: base}) == "":
		return "local"
	}
	return "llm"
}

func defaultModel(name string) string {
	for _, pr := range llmPresets {
		if pr.name == name {
			return pr.model
		}
	}
	return llmPresets[0].model
}

// askApprovers explains /whoami and asks who approves. When nobody named
// is on an enabled gateway, this terminal's user approves, and its
// gateway is enabled for that.
func askApprovers(p *prompter, t gatewayChoices, f initFlags, plan *initPlan) error {
	term, hasTerm := t.terminal()
	def := ""
	if hasTerm {
		def = strings.Join(term.DefaultApprovers, ",")
	}
	answer := f.approvers
	if answer == "" && !p.yes {
		example := def
		if ps := t.platforms(); len(ps) > 0 {
			example = ps[0] + ":123456789"
		}
		p.say("Who approves held actions (a shell command, a file write)? An identity is gateway:id, such as %s.", example)
		p.say("To learn yours, start the bot and send it /whoami: it answers with your gateway:id. Until then,")
		p.say("the default lets this terminal's user approve; add yours to hitl.approvers later and reload.")
		var err error
		if answer, err = p.ask("Approvers, comma-separated", def); err != nil {
			return err
		}
	}
	if answer == "" {
		answer = def
	}
	enabled := map[string]bool{}
	for _, g := range plan.gateways {
		enabled[g] = true
	}
	if hasTerm && plan.terminal {
		enabled[term.Name] = true
	}
	onEnabled := false
	for _, a := range strings.FieldsFunc(answer, func(r rune) bool { return r == ',' || r == ' ' }) {
		gw, id, ok := strings.Cut(a, ":")
		if _, known := t.byName(gw); !ok || !known || id == "" {
			return initUsageErr("approver %s: want gateway:id with a gateway of %s (send /whoami to the bot to learn yours)", quoteAnswer(a), strings.Join(tableNames(t), ", "))
		}
		plan.approvers = append(plan.approvers, a)
		onEnabled = onEnabled || enabled[gw]
	}
	if !onEnabled && hasTerm {
		p.say("  No approver is on an enabled gateway: %s approves too, on this terminal.", def)
		for _, a := range term.DefaultApprovers {
			if !slices.Contains(plan.approvers, a) {
				plan.approvers = append(plan.approvers, a)
			}
		}
		plan.terminal = true
	}
	if len(plan.gateways) == 0 && hasTerm {
		plan.terminal = true
	}
	return nil
}

// checkGateway asks the platform who the bot is with the gateway's own
// online doctor (getMe, users/@me, auth.test), the credentials as given.
// It returns doctor's line, which holds no secret, and whether it passed.
func checkGateway(ctx context.Context, s confkit.Spec, values map[string]string, apiURL string) (string, bool) {
	var vals []string
	for _, v := range values {
		vals = append(vals, v)
	}
	sec := secrets.New(vals...)
	section, err := initSection(s, values, apiURL)
	if err != nil {
		return err.Error(), false
	}
	od, ok := section.(gateways.OnlineDoctor)
	if !ok {
		return s.Name + ": no online check", false
	}
	st := od.DoctorOnline(ctx, gateways.Deps{HTTPClient: &http.Client{Timeout: onlineTimeout}})
	return sec.Redact(strings.Join(st.Lines, "; ")), st.Runs
}
