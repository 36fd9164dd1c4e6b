package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// onlineTimeout bounds each of doctor --online's requests.
const onlineTimeout = 10 * time.Second

// doctorOnline contacts every configured service — each LLM provider's
// GET /models and each enabled gateway's online check — and reports each
// with its latency. A gateway that fails is a problem (the bot checks its
// credentials at start-up and stops); a provider that fails is a warning
// (the bot runs, and asks it again, or the next one, at every turn). With
// nothing to contact it says so. Every line passes through sec: no secret
// is printed.
func doctorOnline(ctx context.Context, r *report, cfg *config.Config, sec *secrets.Set) {
	client := &http.Client{Timeout: onlineTimeout}
	contacted := 0
	for _, p := range cfg.LLM.Providers {
		if app.ProviderSkipped(p) != "" {
			continue
		}
		contacted++
		took, err := getModels(ctx, client, p)
		if err != nil {
			r.warning("online", "%s", sec.Redact(fmt.Sprintf("llm %s: GET %s/models failed after %s: %v", p.Name, config.RedactURL(strings.TrimRight(p.BaseURL, "/")), took, err)))
			continue
		}
		r.line("online", "%s", sec.Redact(fmt.Sprintf("llm %s: GET /models ok in %s", p.Name, took)))
	}
	sections, err := gatewaytable.Sections(cfg.Gateways)
	if err != nil {
		r.problem("online", "%v", err)
		return
	}
	for _, s := range sections {
		od, ok := s.Section.(gateways.OnlineDoctor)
		if !ok || !s.Section.Doctor().Runs {
			continue
		}
		contacted++
		st := od.DoctorOnline(ctx, gateways.Deps{HTTPClient: client})
		for _, l := range st.Lines {
			if st.Runs {
				r.line("online", "%s", sec.Redact(l))
			} else {
				r.problem("online", "%s", sec.Redact(l))
			}
		}
		if !st.Runs && len(st.Lines) == 0 {
			r.problem("online", "%s: online check failed", s.Name)
		}
	}
	if contacted == 0 {
		r.line("online", "nothing to contact: no LLM provider is in use (the offline demo model needs no network) and no enabled gateway is on a platform")
	}
}

// getModels asks a provider for its models, the cheapest authenticated
// request an OpenAI-compatible server answers, and returns how long it
// took. The error never carries the URL (it may hold credentials).
func getModels(ctx context.Context, client *http.Client, p config.Provider) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, onlineTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(p.BaseURL, "/")+"/models", nil)
	if err != nil {
		return 0, errors.New("base_url is not a URL")
	}
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey.Value())
	}
	began := time.Now()
	resp, err := client.Do(req)
	took := time.Since(began).Round(time.Millisecond)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return took, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) //nolint:errcheck // only the status matters
	if resp.StatusCode != http.StatusOK {
		return took, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return took, nil
}
