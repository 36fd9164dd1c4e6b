package metrics

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// maxSeriesPerFamily bounds the series of one family: label values come
// from the configuration and the code (gateway, provider, tool and webhook
// names, outcomes), never from a chat, but a long configuration or an MCP
// server listing tools by the thousand must not grow a scrape without
// limit. A family's series past the bound are counted together under
// every label value "overflow".
const maxSeriesPerFamily = 1000

// maxLabelLen bounds a label value in bytes; a longer one is cut (at a
// rune's start) to this length.
const maxLabelLen = 128

// overflow is the label value of a family's series past maxSeriesPerFamily.
const overflow = "overflow"

// counter is a monotonic count, safe for concurrent use.
type counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *counter) Inc() { c.n.Add(1) }

// Add adds n when it is positive (a counter never goes down).
func (c *counter) Add(n int) {
	if n > 0 {
		c.n.Add(uint64(n))
	}
}

// histogram counts observations in Prometheus buckets (an observation v
// falls in the first bucket whose upper bound le has v <= le), safe for
// concurrent use.
type histogram struct {
	bounds []float64       // ascending upper bounds, +Inf not among them
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf's
	sum    atomic.Uint64   // float64 bits
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe records v.
func (h *histogram) Observe(v float64) {
	// The first bound ≥ v (sort.SearchFloat64s without its closure);
	// len(bounds), the +Inf bucket, when none is (or v is NaN).
	lo, hi := 0, len(h.bounds)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if !(h.bounds[mid] >= v) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	h.counts[lo].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// kind is a family's TYPE.
type kind string

const (
	kindCounter   kind = "counter"
	kindGauge     kind = "gauge"
	kindHistogram kind = "histogram"
	kindSummary   kind = "summary"
)

// entry is one series: its family, its label set as written (`{k="v"}`
// or ""), and exactly one of a counter, a histogram or a gauge's func.
type entry struct {
	fam, labels string
	c           *counter
	h           *histogram
	g           func() float64
}

func (e *entry) kind() kind {
	switch {
	case e.c != nil:
		return kindCounter
	case e.h != nil:
		return kindHistogram
	}
	return kindGauge
}

// seriesKey identifies a series: its family and up to two label values
// (each family has fixed label names).
type seriesKey struct{ fam, v1, v2 string }

// labels are a series' label names and values; k2 "" means one label,
// k1 "" none.
type labels struct{ k1, v1, k2, v2 string }

// lookup returns the series of fam with l, or registers it (a counter, or
// a histogram with buckets when hist) and caches it. A cached series
// costs a read lock and a map lookup and allocates nothing.
func (r *Registry) lookup(fam string, l labels, hist bool, buckets []float64) *entry {
	l.v1, l.v2 = clip(l.v1), clip(l.v2)
	key := seriesKey{fam, l.v1, l.v2}
	r.mu.RLock()
	e, ok := r.series[key]
	r.mu.RUnlock()
	if ok {
		return e
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.series[key]; ok {
		return e
	}
	if r.perFamily[fam] >= maxSeriesPerFamily {
		// Past the bound, nothing more is cached: the overflow series
		// is found under its own key.
		l.v1, l.v2 = overflowValue(l.k1), overflowValue(l.k2)
		key = seriesKey{fam, l.v1, l.v2}
		if e, ok := r.series[key]; ok {
			return e
		}
	}
	e = &entry{fam: fam, labels: labelSet(l.k1, l.v1, l.k2, l.v2)}
	if hist {
		e.h = newHistogram(buckets)
	} else {
		e.c = new(counter)
	}
	r.series[key] = e
	r.perFamily[fam]++
	r.all = append(r.all, e)
	return e
}

// overflowValue is the value of label k in a family's overflow series.
func overflowValue(k string) string {
	if k == "" {
		return ""
	}
	return overflow
}

// clip cuts v to at most maxLabelLen bytes, at a rune's start, its
// bytes that are not UTF-8 replaced (as escape would write them: two
// values that differ only there would be two series under one label set).
func clip(v string) string {
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, string(utf8.RuneError))
	}
	if len(v) <= maxLabelLen {
		return v
	}
	n := maxLabelLen
	for n > 0 && v[n]&0xC0 == 0x80 {
		n--
	}
	return v[:n]
}

// addGauge registers a gauge series read from f at each scrape.
func (r *Registry) addGauge(fam, labelSet string, f func() float64) {
	r.mu.Lock()
	r.all = append(r.all, &entry{fam: fam, labels: labelSet, g: f})
	r.mu.Unlock()
}

// labelSet writes label pairs (name, value, …; a pair with name "" is
// left out) as the text format wants them, values escaped: `{k="v",…}`,
// or "" for none.
func labelSet(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		escape(&b, kv[i+1])
		b.WriteByte('"')
	}
	if b.Len() > 0 {
		b.WriteByte('}')
	}
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

// WritePrometheus writes every metric, then the Go runtime and process
// metrics, in the Prometheus text format (version 0.0.4): each family
// once, with its # HELP and # TYPE lines, its series together, families
// and series in a stable order.
func (r *Registry) WritePrometheus(w io.Writer) error {
	r.mu.RLock()
	all := slices.Clone(r.all)
	r.mu.RUnlock()
	slices.SortFunc(all, func(a, b *entry) int {
		if c := strings.Compare(a.fam, b.fam); c != 0 {
			return c
		}
		return strings.Compare(a.labels, b.labels)
	})
	t := &text{w: bufio.NewWriter(w)}
	for i, e := range all {
		if i == 0 || all[i-1].fam != e.fam {
			t.family(e.fam, e.kind(), help[e.fam])
		}
		switch {
		case e.c != nil:
			t.uint(e.fam, e.labels, e.c.n.Load())
		case e.h != nil:
			t.histogram(e.fam, e.labels, e.h)
		default:
			t.float(e.fam, e.labels, e.g())
		}
	}
	writeRuntime(t)
	writeProcess(t)
	return t.w.Flush()
}

// text writes the text format's lines.
type text struct {
	w   *bufio.Writer
	num []byte
}

// family writes a family's # HELP and # TYPE lines.
func (t *text) family(name string, k kind, help string) {
	t.w.WriteString("# HELP " + name + " ")
	for _, c := range help {
		switch c {
		case '\\':
			t.w.WriteString(`\\`)
		case '\n':
			t.w.WriteString(`\n`)
		default:
			t.w.WriteRune(c)
		}
	}
	t.w.WriteString("\n# TYPE " + name + " " + string(k) + "\n")
}

// float writes a sample line with value v.
func (t *text) float(name, labels string, v float64) {
	t.w.WriteString(name)
	t.w.WriteString(labels)
	t.w.WriteByte(' ')
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		t.num = strconv.AppendInt(t.num[:0], int64(v), 10) // 1700000000, not 1.7e+09
	} else {
		t.num = strconv.AppendFloat(t.num[:0], v, 'g', -1, 64)
	}
	t.w.Write(t.num)
	t.w.WriteByte('\n')
}

// uint writes a sample line with the integer value n.
func (t *text) uint(name, labels string, n uint64) {
	t.w.WriteString(name)
	t.w.WriteString(labels)
	t.w.WriteByte(' ')
	t.num = strconv.AppendUint(t.num[:0], n, 10)
	t.w.Write(t.num)
	t.w.WriteByte('\n')
}

// histogram writes a histogram's cumulative _bucket lines (le="+Inf"
// last), its _sum and its _count; _count is the +Inf bucket's, read once,
// so the two always agree in a scrape.
func (t *text) histogram(name, labels string, h *histogram) {
	inner := ""
	if labels != "" {
		inner = labels[1:len(labels)-1] + ","
	}
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		le := "+Inf"
		if i < len(h.bounds) {
			le = strconv.FormatFloat(h.bounds[i], 'g', -1, 64)
		}
		t.uint(name+"_bucket", `{`+inner+`le="`+le+`"}`, cum)
	}
	t.float(name+"_sum", labels, math.Float64frombits(h.sum.Load()))
	t.uint(name+"_count", labels, cum)
}
