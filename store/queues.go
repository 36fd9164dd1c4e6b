package store

// The queues of instances sharing one database: replies paced across them
// (SendSlots), replies written before they are sent (Outbox), received
// messages claimed in conversation order (Inbox); the cluster package
// drives them.

import (
	"context"
	"errors"
	"time"
)

// SendSlots paces requests to a platform among all the instances sharing
// the store (gateways.SlotReserver, through app): a platform's
// limit per token holds for them together. Each limit is a sliding window
// as gateways.Pacer keeps it in memory: at most N requests in any window of
// length Per under its key.
type SendSlots interface {
	// ReserveSend reserves the earliest time, not before now (the store's
	// clock), at which one more request fits every limit given, counting
	// the requests reserved before under each key, and records it under
	// each key. It returns how long from now that time is: the caller
	// makes its request then. It may be below zero: the time passed while
	// the reservation was made (the store's clock read as it ends, past a
	// slow commit), and the caller is that late. Every limit must have
	// N > 0 and Per > 0.
	ReserveSend(ctx context.Context, limits ...SendLimit) (time.Duration, error)
}

// SendLimit is one limit of a reservation: at most N requests in any
// window of length Per under Key.
//
// Own, when over zero and under Per, is the window of a run of N+1
// requests that were all reserved by Owner (the reserving instance, the
// same in every limit of one reservation): a run with another instance's
// request in it keeps Per. An instance alone on a key then pays no margin
// for the others' delays, while two instances keep it between them.
type SendLimit struct {
	Key   string
	N     int
	Per   time.Duration
	Own   time.Duration
	Owner string
}

// SendSlotKeep is how long a send slot key with no reservation is kept
// before Prune forgets it: far longer than any platform's window.
const SendSlotKeep = time.Hour

// Outbox keeps replies durable among the instances sharing the store
// (gateways.Journal, through app): a reply is written before it is
// sent and marked once the platform accepted it, so that one whose
// composer died is sent by another instance with the same sender.
type Outbox interface {
	// AddReply writes r (its ID, Done, State and times ignored) as pending,
	// composed by r.Composer now, and returns its id; ErrReplyExists when
	// r.InboxID is set and a reply of that inbox entry was written.
	AddReply(ctx context.Context, r OutboxReply) (int64, error)
	// ReplyDone records that the platform accepted the first done chunks
	// of reply id; state ReplySent or ReplyFailed ends it (it is never
	// sent again), ReplyPending keeps it open.
	ReplyDone(ctx context.Context, id int64, done int, state string) error
	// ClaimReplies hands instance the pending replies of sender, at most
	// max, oldest first, whose composer has no heartbeat (Instances)
	// within ttl of now, or which instance itself composed before started
	// (a previous run under the same name); each becomes instance's, so
	// that of concurrent callers only one gets it.
	ClaimReplies(ctx context.Context, sender, instance string, ttl time.Duration, started time.Time, max int) ([]OutboxReply, error)
}

// The states of an OutboxReply.
const (
	ReplyPending = "pending"
	ReplySent    = "sent"
	ReplyFailed  = "failed"
)

// OutboxKeep is how long a reply is kept after its last change before
// Prune deletes it, whatever its state.
const OutboxKeep = 24 * time.Hour

// OutboxReply is a reply in the outbox.
type OutboxReply struct {
	ID       int64
	Sender   string // gateway and token id: who may send it ("<gateway>:<bot id>")
	Gateway  string
	Chat     string
	Thread   string
	Text     string
	Composer string // the instance sending it
	Done     int    // chunks the platform accepted
	State    string
	InboxID  int64 // the inbox entry whose turn it answers (InboxReplies); 0 none
}

// Inbox is the durable inbox of instances sharing the store: a received
// message is put before the platform is told it arrived, and any instance
// then claims it and runs its turn. One conversation's entries are claimed
// one at a time, oldest first: only the oldest pending entry of a
// conversation is ever claimable, and only while no live claim holds it.
// A claim lasts until its expiry (the store's clock), which the holder
// renews; an expired claim is taken over by the next claimer. app
// type-asserts it only on a shared store (Sharer).
type Inbox interface {
	// PutInbox writes e as pending (e.ID, Stage and Received are ignored)
	// unless an entry with its Gateway and Key exists: a redelivery is a
	// no-op, added false (and id 0). A positive reserve keeps the entry
	// for e.Receiver until reserve from now (see ClaimInbox); 0 leaves it
	// to any claimer.
	PutInbox(ctx context.Context, e InboxEntry, reserve time.Duration) (id int64, added bool, err error)
	// ClaimInbox claims for holder, until ttl from now, the oldest entry
	// among the pending entries that are their conversation's oldest, of
	// a conversation on one of gateways, that nobody holds: unclaimed and
	// not reserved for another receiver, or whose claim or reservation has
	// expired, or reserved for holder itself. ok is false when there is
	// none. Of concurrent claimers, at most one gets a conversation.
	ClaimInbox(ctx context.Context, holder string, gateways []string, ttl time.Duration) (e InboxEntry, ok bool, err error)
	// RenewInbox extends to ttl from now holder's claims and reservations
	// of the pending entries ids; the others are left alone.
	RenewInbox(ctx context.Context, holder string, ids []int64, ttl time.Duration) error
	// SetInboxStage records how far the turn of entry id got; it fails
	// with ErrNotHeld unless holder holds an unexpired claim of it.
	SetInboxStage(ctx context.Context, id int64, holder string, stage int) error
	// FinishInbox marks entry id done (it stays, so that a redelivery is
	// still a no-op, until Prune forgets it after InboxKeep); it fails
	// with ErrNotHeld unless holder holds a claim of it.
	FinishInbox(ctx context.Context, id int64, holder string) error
	// ReleaseInbox gives holder's claim of entry id back at once (its
	// stage kept), for another claimer.
	ReleaseInbox(ctx context.Context, id int64, holder string) error
	// CancelInbox asks the holder of conv's claimed entry (a live claim)
	// to stop its turn (/cancel typed to another instance) and reports
	// whether there was one; the holder learns of it from WatchInbox
	// (InboxCancel) and CancelledInbox. A later claim of the entry (a
	// takeover) clears the request.
	CancelInbox(ctx context.Context, conv string) (bool, error)
	// CancelledInbox lists holder's pending entries whose turn was asked
	// to stop.
	CancelledInbox(ctx context.Context, holder string) ([]int64, error)
	// WatchInbox calls wake whenever an entry may have become claimable
	// on any instance (put, finished, released; what is "") or a turn
	// was asked to stop (what is InboxCancel), until ctx ends or the
	// connection fails; callers also poll, a wake can be lost.
	WatchInbox(ctx context.Context, wake func(what string)) error
}

// InboxReplies links a turn's reply to its inbox entry, so that the reply
// is sent once across instances: its text is recorded with the stage
// "replied" before the reply is handed over, and an Outbox row names the
// entry it answers, at most one row per entry. An instance that takes the
// turn over at that stage hands the recorded reply over again: if the
// first instance wrote it to the outbox (whose loop sends it), AddReply
// fails with ErrReplyExists and it is not sent again; if that instance
// died before, this one writes and sends it.
type InboxReplies interface {
	// SetInboxReply records, as SetInboxStage does (ErrNotHeld unless
	// holder holds a live claim), stage and the text of the reply of
	// entry id's turn.
	SetInboxReply(ctx context.Context, id int64, holder string, stage int, text string) error
	// InboxReply returns the reply text recorded for entry id, "" none.
	InboxReply(ctx context.Context, id int64) (string, error)
}

// InboxHandOn is an Inbox that can, in the row write that marks a turn
// done, take the next entry for the same holder without a claim of its
// own (a message queued behind a busy conversation then costs no claim).
type InboxHandOn interface {
	// FinishNextInbox marks entry id done, as FinishInbox does, and takes
	// for holder, until ttl from now and while the heartbeat of holder's
	// process (Instance.Process; "" none) is younger than ttl, the oldest
	// conversation head of gateways that nobody holds, reserves or has
	// taken: held by holder as a claim is (SetInboxStage, RenewInbox,
	// FinishInbox, ReleaseInbox, CancelInbox know it), claimable by no one
	// else meanwhile. ok is false when no entry was taken; ErrNotHeld when
	// id was not holder's.
	FinishNextInbox(ctx context.Context, id int64, holder, process string, gateways []string, ttl time.Duration) (e InboxEntry, ok bool, err error)
}

// InboxClaimer is an Inbox that can put an entry already claimed by its
// receiver when nothing is before it in its conversation, sparing the
// claim's write: the receiver, with a turn free, runs it at once.
type InboxClaimer interface {
	// PutClaimInbox writes e as PutInbox does and, when its conversation
	// has no pending entry (atomically with any other put of it), claims
	// it for e.Receiver until ttl from now (claimed true); otherwise it
	// is left pending as PutInbox leaves it (reserve as there).
	PutClaimInbox(ctx context.Context, e InboxEntry, reserve, ttl time.Duration) (id int64, added, claimed bool, err error)
}

// ErrReplyExists is matched (errors.Is) by the error of Outbox.AddReply
// for a reply whose InboxID another reply already answers.
var ErrReplyExists = errors.New("store: the inbox entry's reply is already in the outbox")

// ErrNotHeld is matched (errors.Is) by the error of an inbox operation on
// an entry the caller no longer holds: its claim expired and another
// instance may have taken it over.
var ErrNotHeld = errors.New("store: inbox entry not held")

// InboxResetter makes /reset hold across the instances sharing the
// store: the conversation's history is forgotten and the turns of it
// that other instances run at that moment are marked, by entry, so that
// their holders stop them and keep nothing of them. A turn claimed after
// the reset is never marked. cluster type-asserts it.
type InboxResetter interface {
	// ResetInbox, in one transaction, forgets conv's history and marks
	// conv's entries claimed (a live claim) by an instance other than
	// holder; it wakes the instances with InboxCancel and reports whether
	// an entry was marked. The marked entries' rows stay locked until the
	// history is gone, so none of them is finished in between.
	ResetInbox(ctx context.Context, conv, holder string) (bool, error)
	// InboxResets returns those of ids that ResetInbox marked.
	InboxResets(ctx context.Context, ids []int64) ([]int64, error)
}

// InboxCancel is what WatchInbox reports when a turn was asked to stop.
const InboxCancel = "cancel"

// InboxKeep is how long a done inbox entry is kept (a redelivery within it
// is still recognised) before Prune deletes it.
const InboxKeep = 24 * time.Hour

// InboxEntry is one received message in the inbox.
type InboxEntry struct {
	ID       int64
	Gateway  string // with Key, the platform's identity of the message
	Key      string
	Conv     string // the conversation's key: its entries run in order
	Data     []byte // the message, encoded by its user
	Files    int    // attachments the receiver holds in memory
	Receiver string // the instance that received it
	Stage    int    // how far a turn got, as its user counts; 0 not started
	Received time.Time
}
