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
