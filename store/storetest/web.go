package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// WebSessionContract tests a store.WebSessions: a link is used once, even
// by concurrent callers on two handles of one database, and not once
// expired; a session is found until it expires or is ended, from either
// handle; ending a person's sessions ends only theirs. newPair returns two
// handles on one database reading their time from now.
func WebSessionContract(t *testing.T, newPair func(t *testing.T, now func() time.Time) (a, b store.WebSessions)) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	a, b := newPair(t, clock.Now)
	now := clock.Now()
	const ann, bob = core.Identity("slack:U1"), core.Identity("discord:2")
	if err := a.AddWebLink(ctx, record.WebLink{Hash: "l1", Identity: ann, Created: now, Expires: now.Add(10 * time.Minute)}); err != nil {
		t.Fatalf("AddWebLink: %v", err)
	}
	var wg sync.WaitGroup
	got := make([]error, 8)
	for i := range got {
		h := a
		if i%2 == 1 {
			h = b
		}
		wg.Go(func() {
			l, err := h.UseWebLink(ctx, "l1")
			if err == nil && l.Identity != ann {
				t.Errorf("UseWebLink = %+v; want %s's link", l, ann)
			}
			got[i] = err
		})
	}
	wg.Wait()
	used := 0
	for _, err := range got {
		switch {
		case err == nil:
			used++
		case !errors.Is(err, record.ErrNotFound):
			t.Errorf("UseWebLink: %v; want nil or record.ErrNotFound", err)
		}
	}
	if used != 1 {
		t.Errorf("the link was used %d times by 8 callers; want once", used)
	}
	if _, err := b.UseWebLink(ctx, "nope"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("UseWebLink(unknown) = %v; want record.ErrNotFound", err)
	}
	if err := a.AddWebLink(ctx, record.WebLink{Hash: "l2", Identity: ann, Created: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatalf("AddWebLink: %v", err)
	}
	clock.Set(now.Add(time.Minute))
	if _, err := b.UseWebLink(ctx, "l2"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("UseWebLink(expired) = %v; want record.ErrNotFound", err)
	}
	webSessions(t, clock, a, b, ann, bob)
}

// webSessions is WebSessionContract's part about sessions.
func webSessions(t *testing.T, clock *Clock, a, b store.WebSessions, ann, bob core.Identity) {
	t.Helper()
	ctx := context.Background()
	now := clock.Now()
	for _, s := range []record.WebSession{
		{Hash: "s1", Identity: ann, Created: now, Expires: now.Add(time.Hour)},
		{Hash: "s2", Identity: ann, Created: now, Expires: now.Add(2 * time.Hour)},
		{Hash: "s3", Identity: bob, Created: now, Expires: now.Add(time.Hour)},
	} {
		if err := a.AddWebSession(ctx, s); err != nil {
			t.Fatalf("AddWebSession: %v", err)
		}
	}
	if s, err := b.WebSession(ctx, "s1"); err != nil || s.Identity != ann || !s.Expires.Equal(now.Add(time.Hour)) {
		t.Errorf("WebSession(s1) from the other handle = %+v, %v; want %s's until %s", s, err, ann, now.Add(time.Hour))
	}
	if err := b.EndWebSession(ctx, "s2"); err != nil {
		t.Fatalf("EndWebSession: %v", err)
	}
	if _, err := a.WebSession(ctx, "s2"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("WebSession(ended) = %v; want record.ErrNotFound", err)
	}
	clock.Set(now.Add(time.Hour))
	if _, err := a.WebSession(ctx, "s1"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("WebSession(expired) = %v; want record.ErrNotFound", err)
	}
	clock.Set(now)
	if n, err := b.EndWebSessions(ctx, ann); err != nil || n != 1 {
		t.Errorf("EndWebSessions(%s) = %d, %v; want 1 (s1; s2 was ended)", ann, n, err)
	}
	if _, err := a.WebSession(ctx, "s1"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("WebSession(s1) after EndWebSessions = %v; want record.ErrNotFound", err)
	}
	if s, err := a.WebSession(ctx, "s3"); err != nil || s.Identity != bob {
		t.Errorf("WebSession(s3) = %+v, %v; want %s's, untouched", s, err, bob)
	}
}

// ActivityStore is a history that lists its active conversations.
type ActivityStore interface {
	core.History
	store.Conversations
}

// ActivityContract tests store.Conversations: the conversations with a
// message since a time, the latest first, at most a limit. newStore makes
// the store read its time from now.
func ActivityContract(t *testing.T, newStore func(t *testing.T, now func() time.Time) ActivityStore) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newStore(t, clock.Now)
	at := func(d time.Duration, conv string) {
		clock.Set(clusterEpoch.Add(d))
		if err := s.Append(ctx, conv, llm.Message{Role: llm.RoleUser, Content: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	at(-48*time.Hour, "slack:COLD")
	at(0, "slack:CX")
	at(time.Minute, "slack:CY")
	at(2*time.Minute, "slack:CX")
	got, err := s.ActiveConversations(ctx, clusterEpoch.Add(-time.Hour), 10)
	if err != nil || len(got) != 2 || got[0].Conv != "slack:CX" || !got[0].Last.Equal(clusterEpoch.Add(2*time.Minute)) || got[1].Conv != "slack:CY" {
		t.Errorf("ActiveConversations = %+v, %v; want slack:CX (at +2m) then slack:CY", got, err)
	}
	if got, err := s.ActiveConversations(ctx, clusterEpoch.Add(-time.Hour), 1); err != nil || len(got) != 1 {
		t.Errorf("ActiveConversations(limit 1) = %+v, %v; want one", got, err)
	}
}
