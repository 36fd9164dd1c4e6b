package metrics

// WebhookDeliveries counts webhook deliveries by webhook and outcome.
const WebhookDeliveries = "gatehouse_webhook_deliveries_total"

// Webhook counts one delivery of the webhook name with its outcome
// (accepted, duplicate, ignored, unauthorized, too_large, limited,
// bad_request, busy, error, unknown). An unknown webhook's requests are
// counted under the name "" so that a scan cannot make series.
func (r *Registry) Webhook(name, outcome string) {
	if r != nil {
		r.counter(WebhookDeliveries, labels{"webhook", name, "outcome", outcome}).Inc()
	}
}
