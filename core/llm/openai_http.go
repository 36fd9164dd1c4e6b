package llm

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

// go-openai does not expose the headers of an error answer, so a thin
// wrapper around the http.Client (go-openai's HTTPDoer hook, which serves
// the same purpose as a wrapping RoundTripper without copying the caller's
// client) records the status and Retry-After into a per-request httpTap
// carried by the request's context. No state is shared between requests.

type tapKey struct{}

// httpTap receives what go-openai hides of one HTTP answer.
type httpTap struct {
	status     int
	retryAfter time.Duration
	// keep, when positive, asks for a copy of a successful answer's body
	// as go-openai reads it, up to keep bytes (for the fields it drops,
	// such as a transcription's usage); over keep, body is dropped and
	// cut is set.
	keep int
	body bytes.Buffer
	cut  bool
}

// teeBody copies what is read of a body into its tap, within tap.keep.
type teeBody struct {
	io.ReadCloser
	tap *httpTap
}

func (b teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if t := b.tap; n > 0 && !t.cut {
		if t.body.Len()+n > t.keep {
			t.body.Reset()
			t.cut = true
		} else {
			t.body.Write(p[:n])
		}
	}
	return n, err
}

type tapDoer struct {
	client *http.Client
}

// Do sends req and records the answer's status and Retry-After.
func (d tapDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if resp == nil {
		return resp, err
	}
	if tap, ok := req.Context().Value(tapKey{}).(*httpTap); ok {
		tap.status = resp.StatusCode
		tap.retryAfter = retryAfter(resp.Header, time.Now())
		if tap.keep > 0 && resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Body != nil {
			resp.Body = teeBody{ReadCloser: resp.Body, tap: tap}
		}
	}
	return resp, err
}

// duration is n units: 0 for a value that is not positive (NaN included),
// the longest Duration for one past it (1e300 seconds, Inf), where a plain
// conversion would overflow to a negative wait.
func duration(n float64, unit time.Duration) time.Duration {
	switch d := n * float64(unit); {
	case !(d > 0):
		return 0
	case d >= math.MaxInt64:
		return math.MaxInt64
	default:
		return time.Duration(d)
	}
}

// retryAfter reads retry-after-ms (sent by OpenAI) or Retry-After, in
// seconds or as an HTTP date. It returns zero when there is none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return duration(ms, time.Millisecond)
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return duration(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
