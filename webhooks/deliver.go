package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

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
	th, err := s.thread(ctx, h, d)
	if err != nil {
		return "", err
	}
	// MessageID: in a reply chain, the turn's replies answer the
	// incident's first message.
	sig := core.Signal{Kind: core.KindMessage, Conv: th.conv, From: core.WebhookIdentity(h.Name), Webhook: h.Name,
		Text: strings.TrimSpace(h.Prompt) + "\n\n" + d.Quote(h.Name), MessageID: th.replyTo, At: s.o.Now()}
	if err := s.o.Inbox.Submit(ctx, sig); err != nil {
		return "", fmt.Errorf("submit: %w", err)
	}
	s.audit(ctx, log, h, d, th.conv)
	log.Info().Str("conv", th.conv.Key()).Msg("webhook: delivery accepted")
	return "accepted", nil
}

// incidentThread is where an incident's deliveries run: a conversation
// and, in a reply chain, the message they reply to.
type incidentThread struct {
	conv    core.Conversation
	replyTo string
}

// thread returns the thread of d's incident: the one recorded, or, for
// its first delivery, one opened under h's conversation where the gateway
// can (else the conversation itself) and recorded for the next. Opening
// is claimed in the store first: of the instances taking an incident's
// first deliveries at once, one opens the thread and the others wait for
// it (at most threadWait, then the delivery is answered 503 and retried).
func (s *Server) thread(ctx context.Context, h *Hook, d Delivery) (incidentThread, error) {
	if d.Incident == "" {
		return s.open(ctx, h, d)
	}
	wait := time.NewTimer(threadWait)
	defer wait.Stop()
	poll := time.NewTicker(threadPoll)
	defer poll.Stop()
	for {
		rec, err := s.o.Store.WebhookThread(ctx, h.Name, d.Incident)
		if err != nil {
			return incidentThread{}, fmt.Errorf("incident thread: %w", err)
		}
		if rec.Conv == "" {
			var mine bool
			if rec, mine, err = s.o.Store.ClaimWebhookThread(ctx, h.Name, d.Incident, s.o.Instance, staleThread); err != nil {
				return incidentThread{}, fmt.Errorf("incident thread: %w", err)
			}
			if mine {
				return s.openClaimed(ctx, h, d)
			}
		}
		if rec.Conv != "" {
			return parseThread(rec)
		}
		select { // another instance is opening it
		case <-poll.C:
		case <-wait.C:
			return incidentThread{}, fmt.Errorf("incident thread: still being opened by %s", rec.Opener)
		case <-ctx.Done():
			return incidentThread{}, fmt.Errorf("incident thread: %w", ctx.Err())
		}
	}
}

// openClaimed opens the incident's thread under this instance's claim
// and records it, or releases the claim when it cannot be opened.
func (s *Server) openClaimed(ctx context.Context, h *Hook, d Delivery) (incidentThread, error) {
	th, err := s.open(ctx, h, d)
	if err != nil {
		if rerr := s.o.Store.ReleaseWebhookThread(ctx, h.Name, d.Incident, s.o.Instance); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release the incident's thread: %w", rerr))
		}
		return incidentThread{}, err
	}
	rec, err := s.o.Store.SetWebhookThread(ctx, h.Name, d.Incident, s.o.Instance,
		record.WebhookThread{Conv: th.conv.Key(), ReplyTo: th.replyTo})
	if err != nil {
		return incidentThread{}, fmt.Errorf("incident thread: %w", err)
	}
	if rec.Conv == "" { // the claim was taken over meanwhile: ours it is not
		return incidentThread{}, errors.New("incident thread: the claim to open it was taken over")
	}
	return parseThread(rec)
}

// parseThread reads a recorded thread.
func parseThread(rec record.WebhookThread) (incidentThread, error) {
	conv, err := core.ParseConversation(rec.Conv)
	if err != nil {
		return incidentThread{}, fmt.Errorf("incident thread: %w", err)
	}
	return incidentThread{conv: conv, replyTo: rec.ReplyTo}, nil
}

// open opens a thread for d under h's conversation where its gateway can.
func (s *Server) open(ctx context.Context, h *Hook, d Delivery) (incidentThread, error) {
	var ts core.ThreadStarter
	if s.o.Gateways != nil {
		ts = s.o.Gateways.ThreadStarter(h.Conv.Gateway)
	}
	if ts == nil || h.Conv.Thread != "" {
		return incidentThread{conv: h.Conv}, nil
	}
	conv, replyTo, err := ts.StartThread(ctx, h.Conv, headline(h, d))
	if err != nil {
		return incidentThread{}, fmt.Errorf("open a thread: %w", err)
	}
	return incidentThread{conv: conv, replyTo: replyTo}, nil
}

// headline is the first message of an incident's thread, escaped.
func headline(h *Hook, d Delivery) string {
	return "Webhook " + h.Name + ": " + textutil.GraphicLine(textutil.Shorten(d.Title, maxField))
}

// note says a resolution that starts no turn in one line in the
// incident's thread, when the incident has one.
func (s *Server) note(ctx context.Context, h *Hook, d Delivery) error {
	rec, err := s.o.Store.WebhookThread(ctx, h.Name, d.Incident)
	if err != nil || rec.Conv == "" || s.o.Gateways == nil {
		return err
	}
	th, err := parseThread(rec)
	if err != nil {
		return err
	}
	if err := s.o.Gateways.Send(ctx, th.conv, th.replyTo, textutil.GraphicLine(textutil.Shorten(d.Title, maxField))); err != nil {
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
