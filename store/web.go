package store

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// WebSessions keeps the web console's sign-in links and sessions, shared
// by the instances on one store so that any of them serves a session
// (webconsole's Store; store/storetest.WebSessionContract checks it).
// Times are the store's clock; only hashes of tokens are stored.
type WebSessions interface {
	// AddWebLink stores a sign-in link, forgetting the expired ones.
	AddWebLink(ctx context.Context, l record.WebLink) error
	// UseWebLink consumes the unexpired link whose hash is hash and
	// returns it: of any number of callers one gets it, the others an
	// error matching record.ErrNotFound, as for an unknown, used or
	// expired link.
	UseWebLink(ctx context.Context, hash string) (record.WebLink, error)
	// AddWebSession stores a session, forgetting the expired ones.
	AddWebSession(ctx context.Context, s record.WebSession) error
	// WebSession returns the unexpired session whose hash is hash, or an
	// error matching record.ErrNotFound.
	WebSession(ctx context.Context, hash string) (record.WebSession, error)
	// EndWebSession ends one session (a sign-out from its page); ending
	// one that is not there is no error.
	EndWebSession(ctx context.Context, hash string) error
	// EndWebSessions ends every session of id and returns how many were
	// live (/web signout).
	EndWebSessions(ctx context.Context, id core.Identity) (int, error)
}

// Conversations lists the conversations with recent history, for the
// web console (storetest.ActivityContract checks it).
type Conversations interface {
	// ActiveConversations returns the conversations with a message stored
	// at or after since, the latest first, at most limit.
	ActiveConversations(ctx context.Context, since time.Time, limit int) ([]record.Activity, error)
}
