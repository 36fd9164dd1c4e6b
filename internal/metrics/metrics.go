// Package metrics is gatehouse's Prometheus registry: one value, owned by
// the App and passed to what records, built on
// github.com/VictoriaMetrics/metrics (a metrics.Set, never the library's
// default set). Every recording method is safe on a nil *Registry (it
// records nothing), so components built without one — unit tests — need
// no stub.
//
// The library was chosen over prometheus/client_golang by measurement:
// cmd/bot grows by 0.2 MB with it (3.4 MB with client_golang) and the idle
// bot's RSS by about 1 MiB (3 MiB).
package metrics

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
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
// (llm.timeout is 60 s by default). The library's default buckets end at
// 10 s, below which many a model's answer does not come.
var llmBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120}

// toolBuckets suit a tool run: milliseconds to ten minutes (a tool's
// timeout is 60 s by default, the shell's 300 s).
var toolBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Registry holds gatehouse's metrics. Make one with New.
type Registry struct {
	set *vm.Set
	// series caches each labelled series by its family and label values,
	// so recording a known series is a map lookup that allocates nothing.
	mu     sync.RWMutex
	series map[seriesKey]any // *vm.Counter or *vm.PrometheusHistogram

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
	r := &Registry{set: vm.NewSet(), series: make(map[seriesKey]any)}
	r.set.NewCounter(TurnErrors)
	r.set.NewCounter(ApprovalStoreFail)
	r.set.NewGauge(ReloadSuccess, func() float64 {
		if r.reloadOK.Load() {
			return 1
		}
		return 0
	})
	r.set.NewGauge(ReloadTime, func() float64 { return float64(r.reloadTime.Load()) })
	return r
}

// WritePrometheus writes every metric, then the Go runtime and process
// metrics, in the Prometheus text format, each family with its # HELP
// and # TYPE lines.
func (r *Registry) WritePrometheus(w io.Writer) error {
	var buf bytes.Buffer
	r.set.WritePrometheus(&buf)
	vm.WriteProcessMetrics(&buf)
	return annotate(w, &buf)
}

// annotate copies the library's output to w with a # HELP and a # TYPE
// line before each family. The library writes metadata only under a
// process-wide switch (metrics.ExposeMetadata) and with empty help texts;
// rather than flip a global, the lines are added here, once a scrape.
func annotate(w io.Writer, in io.Reader) error {
	bw := bufio.NewWriter(w)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	last := ""
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		if fam, kind := family(name); fam != last {
			last = fam
			h := help[fam]
			if h == "" {
				h = runtimeHelp(fam)
			}
			bw.WriteString("# HELP " + fam + " " + h + "\n# TYPE " + fam + " " + kind + "\n")
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// family returns the metric family of a sample's name and its type.
func family(name string) (fam, kind string) {
	for _, sfx := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, sfx)
		if ok && isHistogram(base) {
			return base, "histogram"
		}
		if ok && base == "go_gc_duration_seconds" {
			return base, "summary"
		}
	}
	switch {
	case name == "go_gc_duration_seconds":
		return name, "summary"
	case strings.HasSuffix(name, "_total"):
		return name, "counter"
	}
	return name, "gauge"
}

// isHistogram reports whether base is one of ours or the runtime's
// histograms.
func isHistogram(base string) bool {
	switch base {
	case LLMDuration, ToolDuration, ApprovalWait:
		return true
	}
	return strings.HasPrefix(base, "go_") && strings.HasSuffix(base, "_seconds") && base != "go_gc_duration_seconds"
}

// runtimeHelp describes a Go runtime or process metric the library writes.
func runtimeHelp(fam string) string {
	if strings.HasPrefix(fam, "process_") {
		return "Process metric " + fam + " (see the Prometheus process collector)."
	}
	return "Go runtime metric " + fam + "."
}

// QueueDepthFunc registers the queue depth gauge, read from depth at each
// scrape. Call it once.
func (r *Registry) QueueDepthFunc(depth func() int) {
	if r == nil {
		return
	}
	r.set.NewGauge(QueueDepth, func() float64 { return float64(depth()) })
}

// seriesKey identifies a series: its family and up to two label values
// (each family has fixed label names).
type seriesKey struct{ fam, v1, v2 string }

// labels are a series' label names and values; k2 "" means one label,
// k1 "" none.
type labels struct{ k1, v1, k2, v2 string }

// lookup returns the cached metric of fam with l, or registers it (a
// counter, or a histogram when hist; nil buckets are the library's default
// ones) and caches it. A cached series costs a read lock and a map lookup.
func (r *Registry) lookup(fam string, l labels, hist bool, buckets []float64) any {
	key := seriesKey{fam, l.v1, l.v2}
	r.mu.RLock()
	m, ok := r.series[key]
	r.mu.RUnlock()
	if ok {
		return m
	}
	name := fam
	switch {
	case l.k2 != "":
		name = series(fam, l.k1, l.v1, l.k2, l.v2)
	case l.k1 != "":
		name = series(fam, l.k1, l.v1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.series[key]; ok {
		return m
	}
	switch {
	case !hist:
		m = r.set.GetOrCreateCounter(name)
	case buckets == nil:
		m = r.set.GetOrCreatePrometheusHistogram(name)
	default:
		m = r.set.GetOrCreatePrometheusHistogramExt(name, buckets)
	}
	r.series[key] = m
	return m
}

// counter returns the counter of fam with l, registering it on first use.
func (r *Registry) counter(fam string, l labels) *vm.Counter {
	return r.lookup(fam, l, false, nil).(*vm.Counter)
}

// histogram returns the histogram of fam with l, registering it on first
// use.
func (r *Registry) histogram(fam string, l labels, buckets []float64) *vm.PrometheusHistogram {
	return r.lookup(fam, l, true, buckets).(*vm.PrometheusHistogram)
}

// series names a series of fam with label pairs (name, value, …); values
// are escaped as the text format wants.
func series(fam string, kv ...string) string {
	var b strings.Builder
	b.Grow(len(fam) + 32)
	b.WriteString(fam)
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		escape(&b, kv[i+1])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// escape writes v with backslash, double quote and newline escaped.
func escape(b *strings.Builder, v string) {
	for _, c := range v {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
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
	chunks, edits, retries, failures *vm.Counter
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

func inc(c *vm.Counter) {
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
	r.histogram(LLMDuration, labels{k1: "provider", v1: provider}, llmBuckets).Update(took.Seconds())
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
		r.histogram(ToolDuration, labels{k1: "tool", v1: tool}, toolBuckets).Update(took.Seconds())
	}
}

// Approval records an approval's outcome ("approved", "denied",
// "expired") and the time from its request to that decision.
func (r *Registry) Approval(outcome string, wait time.Duration) {
	if r == nil {
		return
	}
	r.counter(Approvals, labels{k1: "outcome", v1: outcome}).Inc()
	r.histogram(ApprovalWait, labels{}, approvalBuckets).Update(max(wait, 0).Seconds())
}

// ApprovalStoreFailure counts a failed attempt to record an approval's
// expiry or interruption.
func (r *Registry) ApprovalStoreFailure() {
	if r != nil {
		r.counter(ApprovalStoreFail, labels{}).Inc()
	}
}
