package discord

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// webhookTTL is how long an interaction token serves @original and
// follow-ups.
const webhookTTL = 15 * time.Minute

// FlagLoading marks the placeholder a deferred (type 5) callback creates.
const FlagLoading = 1 << 7

// callback answers POST /interactions/{id}/{token}/callback: once, within
// Options.InteractionTimeout of the dispatch.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Type int                        `json:"type"`
		Data map[string]json.RawMessage `json:"data"`
	}
	if e := decode(r, &req); e != nil {
		writeAPIError(w, e)
		return
	}
	s.mu.Lock()
	rec, e := s.callbackLocked(r.PathValue("id"), r.PathValue("token"), req.Type, req.Data)
	if e != nil {
		rec.Code = e.code
	}
	s.responses = append(s.responses, rec)
	s.mu.Unlock()
	if e != nil {
		writeAPIError(w, e)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) callbackLocked(id, token string, typ int, data map[string]json.RawMessage) (InteractionResponse, *apiError) {
	rec := InteractionResponse{InteractionID: id, Type: typ}
	in, ok := s.interacts[id]
	if !ok || in.token != token || in.dispatched.IsZero() {
		return rec, errUnknownInteraction
	}
	rec.After = s.now().Sub(in.dispatched)
	switch {
	case rec.After > s.opts.InteractionTimeout:
		return rec, errUnknownInteraction
	case in.acked != 0:
		return rec, errAcknowledged
	}
	valid := typ == CallbackMessage || typ == CallbackDeferredMessage ||
		in.kind == 3 && (typ == CallbackDeferredUpdate || typ == CallbackUpdateMessage)
	if !valid {
		return rec, formError("INTERACTION_RESPONSE_TYPE_INVALID", "Interaction response type is invalid for this interaction.", "type")
	}
	b, e := parseBody(data)
	if e != nil {
		return rec, prefixed(e, "data")
	}
	rec.Content, rec.Components, rec.Flags = b.content, b.components, b.flags
	switch typ {
	case CallbackMessage:
		obj, e := s.createLocked(in.channelID, b, ViaInteraction, in.id)
		if e != nil {
			return rec, e
		}
		in.original, _ = obj["id"].(string)
	case CallbackDeferredMessage:
		m := &stored{
			Sent: Sent{
				ID: s.newIDLocked(), ChannelID: in.channelID, GuildID: in.guildID,
				Flags: b.flags&FlagEphemeral | FlagLoading, Via: ViaInteraction, Interaction: in.id, At: time.Now(),
			},
			author: s.Bot(),
		}
		s.messages[m.ID] = m
		s.sent = append(s.sent, m.Sent)
		in.original = m.ID
	case CallbackDeferredUpdate:
		in.original = in.messageID
	case CallbackUpdateMessage:
		m, ok := s.messages[in.messageID]
		if !ok {
			return rec, errUnknownMessage
		}
		if _, e := s.editLocked(m, b, ViaInteraction, in.id); e != nil {
			return rec, e
		}
		in.original = in.messageID
	}
	in.acked = typ
	return rec, nil
}

// prefixed nests a 50035 error's field tree under field.
func prefixed(e *apiError, field string) *apiError {
	if e.errors == nil {
		return e
	}
	out := *e
	out.errors = map[string]any{field: e.errors}
	return &out
}

// webhookLocked finds the acknowledged interaction a webhook route names.
func (s *Server) webhookLocked(r *http.Request) (*interaction, *apiError) {
	in, ok := s.byToken[r.PathValue("token")]
	if !ok || r.PathValue("app") != s.opts.AppID || in.acked == 0 || s.now().Sub(in.dispatched) > webhookTTL {
		return nil, errUnknownWebhook
	}
	return in, nil
}

// editOriginal answers PATCH /webhooks/{app}/{token}/messages/{message}:
// @original (the response, or the component's message after type 6 or 7)
// or a follow-up of the interaction.
func (s *Server) editOriginal(w http.ResponseWriter, r *http.Request) {
	b, e := readBody(r)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	s.mu.Lock()
	obj, e := s.editOriginalLocked(r, b)
	s.mu.Unlock()
	if e != nil {
		writeAPIError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

func (s *Server) editOriginalLocked(r *http.Request, b body) (map[string]any, *apiError) {
	in, e := s.webhookLocked(r)
	if e != nil {
		return nil, e
	}
	id := r.PathValue("message")
	if id == "@original" {
		id = in.original
	}
	m, ok := s.messages[id]
	if !ok || id != in.original && m.Interaction != in.id {
		return nil, errUnknownMessage
	}
	if m.Flags&FlagLoading != 0 {
		m.Flags &^= FlagLoading
	}
	return s.editLocked(m, b, ViaInteraction, in.id)
}

// followup answers POST /webhooks/{app}/{token}[?wait=true]: a follow-up
// message of the interaction (FlagEphemeral: only the user sees it).
func (s *Server) followup(w http.ResponseWriter, r *http.Request) {
	b, e := readBody(r)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	s.mu.Lock()
	var obj map[string]any
	in, e := s.webhookLocked(r)
	if e == nil {
		obj, e = s.createLocked(in.channelID, b, ViaFollowup, in.id)
	}
	s.mu.Unlock()
	switch {
	case e != nil:
		writeAPIError(w, e)
	case r.URL.Query().Get("wait") == "true":
		writeJSON(w, http.StatusOK, obj)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// InteractionResponses returns every interaction callback received,
// accepted or refused, in order.
func (s *Server) InteractionResponses() []InteractionResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.responses)
}
