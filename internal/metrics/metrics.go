// Package metrics is gatehouse's Prometheus registry: one value, owned by
// the App and passed to what records, that writes the Prometheus text
// format itself (expose.go; the Go runtime's and the process's metrics in
// runtime.go and process_*.go, read at each scrape). Every recording
// method is safe on a nil *Registry (it records nothing), so components
// built without one — unit tests — need no stub.
//
// It replaced github.com/VictoriaMetrics/metrics (issue 34): that library
// and the runtime/metrics it imports cost about 2.6 ms of package
// initialisation and 50 page faults at every start, before main, for the
// one job of writing this text on GET /metrics.
package metrics

import (
	"sync"
	"sync/atomic"
	"time"
)

// Names of the metric families gatehouse exports.
const (
	MessagesReceived  = "gatehouse_messages_received_total"
	RepliesSent       = "gatehouse_replies_total"
	DeliveryFailures  = "gatehouse_delivery_failed_total"
	DeliveryChunks    = "gatehouse_delivery_sent_total"
	DeliveryEdits     = "gatehouse_delivery_edited_total"
	DeliveryRetries   = "gatehouse_delivery_retried_total"
	GatewayReconnects = "gatehouse_gateway_reconnects_total"
	LLMRequests       = "gatehouse_llm_requests_total"
	LLMDuration       = "gatehouse_llm_request_duration_seconds"
	LLMTokens         = "gatehouse_llm_tokens_total"
	ToolCalls         = "gatehouse_tool_calls_total"
	ToolDuration      = "gatehouse_tool_duration_seconds"
	Approvals         = "gatehouse_approvals_total"
	ApprovalWait      = "gatehouse_approval_decision_seconds"
	ApprovalStoreFail = "gatehouse_approval_store_failures_total"
	TurnErrors        = "gatehouse_turn_errors_total"
	QueueDepth        = "gatehouse_queue_depth"
	ReloadSuccess     = "gatehouse_config_last_reload_successful"
	ReloadTime        = "gatehouse_config_last_reload_success_timestamp_seconds"
	InstanceInfo      = "gatehouse_instance_info"
)

// help is each family's HELP text.
var help = map[string]string{
	MessagesReceived:  "Chat messages received, by gateway.",
	RepliesSent:       "Replies the engine delivered, by gateway.",
	DeliveryFailures:  "Replies and edits finally not delivered after retries, by gateway.",
	DeliveryChunks:    "Message chunks sent by the delivery layer, by gateway.",
	DeliveryEdits:     "Message edits applied by the delivery layer, by gateway.",
	DeliveryRetries:   "Delivery attempts made again after a failure, by gateway.",
	GatewayReconnects: "Times a gateway lost its platform connection (a failed poll, a dropped session) and tried again, by gateway.",
	LLMRequests:       "LLM completion requests, by provider and outcome (ok, error).",
	LLMDuration:       "LLM completion request latency in seconds, by provider.",
	LLMTokens:         "LLM tokens reported by the API, by provider and kind (prompt, completion).",
	ToolCalls:         "Tool calls proposed by the model, by tool and gate decision (allow, deny, approve; invalid: refused for its arguments or an unknown tool, before the gates).",
	ToolDuration:      "Tool run duration in seconds, by tool.",
	Approvals:         "Approval requests resolved, by outcome (approved, denied, expired).",
	ApprovalWait:      "Seconds from an approval request to its decision.",
	ApprovalStoreFail: "Failed attempts to record an approval's expiry or interruption (each retried on the next sweep).",
	TurnErrors:        "Turns that ended in an error the user was told about.",
	QueueDepth:        "Signals waiting in the engine's conversation queues.",
	ReloadSuccess:     "Whether the last configuration reload (or the start-up load) succeeded (1) or failed (0).",
	ReloadTime:        "Unix time of the last successful configuration reload (or of the start-up load).",
	WebhookDeliveries: "Webhook deliveries, by webhook and outcome (accepted, duplicate, ignored, unauthorized, too_large, limited, bad_request, busy, error; unknown: a name no webhook has).",
	InstanceInfo:      "Always 1: this instance's name among those sharing the store (store.instance, or hostname-pid), its version, and whether its store is shared; join it to the other series on the scrape target's instance label.",
}

// approvalBuckets suit a human's decision: seconds to an hour.
var approvalBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600}

// llmBuckets suit a completion: a fraction of a second to two minutes
// (llm.timeout is 60 s by default). Prometheus's default buckets end at
// 10 s, below which many a model's answer does not come.
var llmBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120}

// toolBuckets suit a tool run: milliseconds to ten minutes (a tool's
// timeout is 60 s by default, the shell's 300 s).
var toolBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Registry holds gatehouse's metrics. Make one with New.
type Registry struct {
	// series caches each labelled series by its family and label values,
	// so recording a known series is a map lookup that allocates nothing;
	// all lists every series, gauges included, for the scrape.
	mu        sync.RWMutex
	series    map[seriesKey]*entry
	perFamily map[string]int
	all       []*entry

	reloadOK   atomic.Bool  // the last reload (or the start-up load) succeeded
	reloadTime atomic.Int64 // Unix seconds of the last successful one
}

// SetReload records a configuration load: its success and, when it
// succeeded, its time. The bot records its start-up load, then each reload.
func (r *Registry) SetReload(ok bool, at time.Time) {
	r.reloadOK.Store(ok)
	if ok {
		r.reloadTime.Store(at.Unix())
	}
}

// New returns a Registry with the series that exist before anything is
// recorded: the turn error count, the reload status (0 until SetReload) and, once
// QueueDepthFunc is called, the queue depth.
func New() *Registry {
	r := &Registry{series: make(map[seriesKey]*entry), perFamily: make(map[string]int)}
	r.counter(TurnErrors, labels{})
	r.counter(ApprovalStoreFail, labels{})
	r.addGauge(ReloadSuccess, "", func() float64 {
		if r.reloadOK.Load() {
			return 1
		}
		return 0
	})
	r.addGauge(ReloadTime, "", func() float64 { return float64(r.reloadTime.Load()) })
	return r
}

// QueueDepthFunc registers the queue depth gauge, read from depth at each
// scrape. Call it once.
func (r *Registry) QueueDepthFunc(depth func() int) {
	if r == nil {
		return
	}
	r.addGauge(QueueDepth, "", func() float64 { return float64(depth()) })
}

// counter returns the counter of fam with l, registering it on first use.
func (r *Registry) counter(fam string, l labels) *counter {
	return r.lookup(fam, l, false, nil).c
}

// histogram returns the histogram of fam with l, registering it with
// buckets on first use.
func (r *Registry) histogram(fam string, l labels, buckets []float64) *histogram {
	return r.lookup(fam, l, true, buckets).h
}

// MessageReceived counts a chat message received on gateway.
func (r *Registry) MessageReceived(gateway string) {
	if r != nil {
		r.counter(MessagesReceived, labels{k1: "gateway", v1: gateway}).Inc()
	}
}

// ReplySent counts a reply the engine delivered on gateway.
func (r *Registry) ReplySent(gateway string) {
	if r != nil {
		r.counter(RepliesSent, labels{k1: "gateway", v1: gateway}).Inc()
	}
}

// TurnError counts a turn that ended in an error.
func (r *Registry) TurnError() {
	if r != nil {
		r.counter(TurnErrors, labels{}).Inc()
	}
}

// Delivery is a delivery layer's recorder for one gateway; the zero value
// and a nil Registry's record nothing.
type Delivery struct {
	chunks, edits, retries, failures *counter
}

// Delivery returns the delivery recorder of gateway, its series registered
// (at 0) at once, so a scrape shows every running gateway.
func (r *Registry) Delivery(gateway string) Delivery {
	if r == nil {
		return Delivery{}
	}
	return Delivery{
		chunks:   r.counter(DeliveryChunks, labels{k1: "gateway", v1: gateway}),
		edits:    r.counter(DeliveryEdits, labels{k1: "gateway", v1: gateway}),
		retries:  r.counter(DeliveryRetries, labels{k1: "gateway", v1: gateway}),
		failures: r.counter(DeliveryFailures, labels{k1: "gateway", v1: gateway}),
	}
}

// Sent counts a chunk sent.
func (d Delivery) Sent() { inc(d.chunks) }

// Edited counts an edit applied.
func (d Delivery) Edited() { inc(d.edits) }

// Retried counts an attempt made again.
func (d Delivery) Retried() { inc(d.retries) }

// Failed counts a reply or edit finally not delivered.
func (d Delivery) Failed() { inc(d.failures) }

func inc(c *counter) {
	if c != nil {
		c.Inc()
	}
}

// Reconnects returns the func a gateway calls each time it lost its
// platform connection and tries again (gateways.Deps.Reconnected). The
// series is registered at 0 at once.
func (r *Registry) Reconnects(gateway string) func() {
	if r == nil {
		return func() {}
	}
	c := r.counter(GatewayReconnects, labels{k1: "gateway", v1: gateway})
	return c.Inc
}

// LLMRequest records one completion request to provider: its outcome
// ("ok" or "error") and its latency.
func (r *Registry) LLMRequest(provider, outcome string, took time.Duration) {
	if r == nil {
		return
	}
	r.counter(LLMRequests, labels{"provider", provider, "outcome", outcome}).Inc()
	r.histogram(LLMDuration, labels{k1: "provider", v1: provider}, llmBuckets).Observe(took.Seconds())
}

// Tokens records the usage an API reported for a request to provider.
func (r *Registry) Tokens(provider string, prompt, completion int) {
	if r == nil {
		return
	}
	if prompt > 0 {
		r.counter(LLMTokens, labels{"provider", provider, "kind", "prompt"}).Add(prompt)
	}
	if completion > 0 {
		r.counter(LLMTokens, labels{"provider", provider, "kind", "completion"}).Add(completion)
	}
}

// ToolCall counts a tool call by the gates' decision ("allow", "deny",
// "approve"), or "invalid" for a call refused before the gates (its tool
// unknown, its arguments not fitting). tool must be a registered tool's
// name (or "unknown"): the model's text never becomes a label.
func (r *Registry) ToolCall(tool, decision string) {
	if r != nil {
		r.counter(ToolCalls, labels{"tool", tool, "decision", decision}).Inc()
	}
}

// ToolRun records how long a tool ran.
func (r *Registry) ToolRun(tool string, took time.Duration) {
	if r != nil {
		r.histogram(ToolDuration, labels{k1: "tool", v1: tool}, toolBuckets).Observe(took.Seconds())
	}
}

// Approval records an approval's outcome ("approved", "denied",
// "expired") and the time from its request to that decision.
func (r *Registry) Approval(outcome string, wait time.Duration) {
	if r == nil {
		return
	}
	r.counter(Approvals, labels{k1: "outcome", v1: outcome}).Inc()
	r.histogram(ApprovalWait, labels{}, approvalBuckets).Observe(max(wait, 0).Seconds())
}

// ApprovalStoreFailure counts a failed attempt to record an approval's
// expiry or interruption.
func (r *Registry) ApprovalStoreFailure() {
	if r != nil {
		r.counter(ApprovalStoreFail, labels{}).Inc()
	}
}
