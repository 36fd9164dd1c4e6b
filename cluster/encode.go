package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// maxData bounds an encoded message read back from the store: its text is
// at most engine.max_message (at most 1 MiB), which JSON's escapes make at
// most six times longer, so anything larger is not one of ours.
const maxData = 8 << 20

// wireSignal is a message as the inbox stores it: what another instance
// needs to run its turn. Attachments stay with the receiving instance
// (their Fetchers hold its connections); Schedule is never stored (no
// scheduled run is journaled), and Done was called when it was put.
type wireSignal struct {
	Kind      core.SignalKind `json:"kind"`
	Gateway   string          `json:"gateway"`
	Chat      string          `json:"chat"`
	Thread    string          `json:"thread,omitempty"`
	From      core.Identity   `json:"from"`
	Text      string          `json:"text"`
	MessageID string          `json:"message_id,omitempty"`
	Private   bool            `json:"private,omitempty"`
	At        int64           `json:"at"` // Unix nanoseconds
}

// encode is the stored form of s.
func encode(s core.Signal) ([]byte, error) {
	b, err := json.Marshal(wireSignal{Kind: s.Kind, Gateway: s.Conv.Gateway, Chat: s.Conv.Chat, Thread: s.Conv.Thread,
		From: s.From, Text: s.Text, MessageID: s.MessageID, Private: s.Private, At: s.At.UnixNano()})
	if err != nil {
		return nil, fmt.Errorf("inbox: encode: %w", err)
	}
	return b, nil
}

// decode reverses encode.
func decode(b []byte) (core.Signal, error) {
	if len(b) > maxData {
		return core.Signal{}, fmt.Errorf("inbox: decode: %d bytes, over %d", len(b), maxData)
	}
	var w wireSignal
	if err := json.Unmarshal(b, &w); err != nil {
		return core.Signal{}, fmt.Errorf("inbox: decode: %w", err)
	}
	if w.Kind != core.KindMessage || w.Gateway == "" || w.Chat == "" {
		return core.Signal{}, fmt.Errorf("inbox: decode: not a message of a conversation (kind %d)", w.Kind)
	}
	return core.Signal{Kind: w.Kind, Conv: core.Conversation{Gateway: w.Gateway, Chat: w.Chat, Thread: w.Thread},
		From: w.From, Text: w.Text, MessageID: w.MessageID, Private: w.Private, At: time.Unix(0, w.At).UTC()}, nil
}

// messageKey is the platform's identity of s within its gateway: its
// chat and message id (a message id is unique in its chat on every
// platform), so that a redelivery finds its entry. A message without an
// id gets a random key: it cannot be recognised again.
func messageKey(s core.Signal) string {
	if s.MessageID != "" {
		return s.Conv.Chat + "/" + s.MessageID
	}
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // never fails (crypto/rand)
	return "random/" + hex.EncodeToString(b[:])
}
