package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// take records the verified, parsed delivery d before answering it:
// a duplicate is answered 200 and starts nothing; a new one is acted on
// (act) and its claim finished, or released on failure so that the
// sender's retry is taken again (503).
func (s *Server) take(ctx context.Context, w http.ResponseWriter, e *entry, d Delivery) {
	h := &e.hook
	log := s.o.Log.With().Str("webhook", h.Name).Str("delivery", d.ID).Str("event", d.Event).Logger()
	claim, err := s.o.Store.ClaimWebhookDelivery(ctx, h.Name, d.ID, s.o.Instance, staleClaim)
	switch {
	case err != nil:
		log.Error().Err(err).Msg("webhook: could not record the delivery; the sender is asked to retry")
		s.unavailable(w, e, "error")
		return
	case claim == record.WebhookDuplicate:
		s.outcome(e, "duplicate")
		log.Info().Msg("webhook: a delivery already taken: nothing started")
		fmt.Fprintln(w, "duplicate: already taken")
		return
	case claim == record.WebhookBusy:
		s.unavailable(w, e, "busy")
		return
	}
	outcome, err := s.act(context.WithoutCancel(ctx), log, h, d)
	if err != nil {
		log.Error().Err(err).Msg("webhook: could not act on the delivery; the sender is asked to retry")
		if rerr := s.o.Store.ReleaseWebhookDelivery(context.WithoutCancel(ctx), h.Name, d.ID, s.o.Instance); rerr != nil {
			log.Error().Err(rerr).Msg("webhook: could not release the delivery; it is taken again once its claim is stale")
		}
		s.unavailable(w, e, "error")
		return
	}
	if err := s.o.Store.FinishWebhookDelivery(context.WithoutCancel(ctx), h.Name, d.ID, s.o.Instance); err != nil {
		// Acted on already: answering 2xx keeps the sender from another
		// try; a retry within staleClaim still finds it busy.
		log.Error().Err(err).Msg("webhook: could not mark the delivery done")
	}
	s.outcome(e, outcome)
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintln(w, outcome)
}

// unavailable answers 503 with Retry-After.
func (s *Server) unavailable(w http.ResponseWriter, e *entry, outcome string) {
	s.outcome(e, outcome)
	w.Header().Set("Retry-After", seconds(busyRetry))
	http.Error(w, "try again later", http.StatusServiceUnavailable)
}

// act runs a new delivery: its incident's thread found or opened, then
// its turn submitted, or, for an event not in events, nothing but a
// resolution's one line in a thread that exists. It returns the outcome.
func (s *Server) act(ctx context.Context, log zerolog.Logger, h *Hook, d Delivery) (string, error) {
	if !h.wants(d.Event) {
		if d.Event == "resolved" && d.Incident != "" {
			return "ignored", s.note(ctx, h, d)
		}
		log.Info().Msg("webhook: an event not in events: ignored")
		return "ignored", nil
	}
	conv, err := s.thread(ctx, h, d)
	if err != nil {
		return "", err
	}
	sig := core.Signal{Kind: core.KindMessage, Conv: conv, From: core.WebhookIdentity(h.Name), Webhook: h.Name,
		Text: strings.TrimSpace(h.Prompt) + "\n\n" + d.Quote(h.Name), At: s.o.Now()}
	if err := s.o.Inbox.Submit(ctx, sig); err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	s.audit(ctx, log, h, d, conv)
	log.Info().Str("conv", conv.Key()).Msg("webhook: delivery accepted")
	return "accepted", nil
}

// thread returns the conversation of d's incident: the one recorded, or,
// for its first delivery, a thread opened under h's conversation where the
// gateway can (else the conversation itself), recorded for the next.
func (s *Server) thread(ctx context.Context, h *Hook, d Delivery) (core.Conversation, error) {
	if d.Incident == "" {
		return s.open(ctx, h, d)
	}
	s.mu.Lock() // one thread per incident among this instance's deliveries
	defer s.mu.Unlock()
	key, err := s.o.Store.WebhookThread(ctx, h.Name, d.Incident)
	if err != nil {
		return core.Conversation{}, fmt.Errorf("incident thread: %w", err)
	}
	if key == "" {
		conv, err := s.open(ctx, h, d)
		if err != nil {
			return core.Conversation{}, err
		}
		// Of two instances opening one incident at once, the first
		// recorded wins; the other's first message stays a thread of its own.
		if key, err = s.o.Store.SetWebhookThread(ctx, h.Name, d.Incident, conv.Key()); err != nil {
			return core.Conversation{}, fmt.Errorf("incident thread: %w", err)
		}
	}
	conv, err := core.ParseConversation(key)
	if err != nil {
		return core.Conversation{}, fmt.Errorf("incident thread: %w", err)
	}
	return conv, nil
}

// open opens a thread for d under h's conversation where its gateway can.
func (s *Server) open(ctx context.Context, h *Hook, d Delivery) (core.Conversation, error) {
	var ts core.ThreadStarter
	if s.o.Gateways != nil {
		ts = s.o.Gateways.ThreadStarter(h.Conv.Gateway)
	}
	if ts == nil || h.Conv.Thread != "" {
		return h.Conv, nil
	}
	conv, err := ts.StartThread(ctx, h.Conv, headline(h, d))
	if err != nil {
		return core.Conversation{}, fmt.Errorf("open a thread: %w", err)
	}
	return conv, nil
}

// headline is the first message of an incident's thread, escaped.
func headline(h *Hook, d Delivery) string {
	return "Webhook " + h.Name + ": " + textutil.GraphicLine(textutil.Shorten(d.Title, maxField))
}

// note says a resolution that starts no turn in one line in the
// incident's thread, when the incident has one.
func (s *Server) note(ctx context.Context, h *Hook, d Delivery) error {
	key, err := s.o.Store.WebhookThread(ctx, h.Name, d.Incident)
	if err != nil || key == "" || s.o.Gateways == nil {
		return err
	}
	conv, err := core.ParseConversation(key)
	if err != nil {
		return fmt.Errorf("incident thread: %w", err)
	}
	if err := s.o.Gateways.Send(ctx, conv, textutil.GraphicLine(textutil.Shorten(d.Title, maxField))); err != nil {
		return fmt.Errorf("resolution note: %w", err)
	}
	return nil
}

// audit records an accepted delivery with its identity.
func (s *Server) audit(ctx context.Context, log zerolog.Logger, h *Hook, d Delivery, conv core.Conversation) {
	if s.o.Audit == nil {
		return
	}
	args, _ := json.Marshal(map[string]string{"webhook": h.Name, "format": h.Format, "event": d.Event, "delivery": d.ID, "incident": d.Incident})
	err := s.o.Audit.AppendAudit(ctx, record.AuditEntry{At: s.o.Now(), Conv: conv.Key(), Tool: "webhook", Args: string(args),
		RequestedBy: core.WebhookIdentity(h.Name), Outcome: "accepted", Detail: d.ID})
	if err != nil {
		log.Error().Err(err).Msg("webhook: could not audit the delivery")
	}
}
