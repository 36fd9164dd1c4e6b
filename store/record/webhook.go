package record

// WebhookClaim is what claiming a webhook delivery found
// (store.Webhooks.ClaimWebhookDelivery).
type WebhookClaim uint8

// The outcomes of a claim.
const (
	// WebhookTaken: the caller recorded the delivery and takes it (it was
	// new, or the instance that was taking it stopped before finishing).
	WebhookTaken WebhookClaim = iota + 1
	// WebhookDuplicate: the delivery was taken before; it starts nothing.
	WebhookDuplicate
	// WebhookBusy: another instance is taking it right now; the sender is
	// asked to retry (503 with Retry-After).
	WebhookBusy
)

// WebhookThread is the thread of a webhook's incident
// (store.Webhooks.WebhookThread): the conversation its deliveries run in
// and, in a chat without threads, the message they reply to.
type WebhookThread struct {
	// Conv is the conversation key; "" while the thread is being opened
	// (Opener's claim) or when none is recorded.
	Conv string
	// ReplyTo is the platform id of the incident's first message, which
	// its later messages reply to (a reply chain, in a chat without
	// threads); "" in a thread of its own.
	ReplyTo string
	// Opener is the instance whose claim to open the thread is recorded,
	// while Conv is "".
	Opener string
}
