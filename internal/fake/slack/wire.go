package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxBody bounds a request body.
const maxBody = 8 << 20

// params are a call's arguments as strings; JSON-valued arguments in a JSON
// body (blocks, attachments) are kept as JSON text, as on the form wire.
type params map[string]string

// has reports whether the call carried key at all (even empty).
func (p params) has(key string) bool {
	_, ok := p[key]
	return ok
}

// parseParams reads the query string and a form-encoded or JSON body.
func parseParams(r *http.Request) (params, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	p := params{}
	if ct == "application/json" {
		if err := parseJSON(r.Body, p); err != nil {
			return nil, err
		}
		r.Form = r.URL.Query()
	} else if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("form: %w", err)
	}
	for k, v := range r.Form {
		if _, set := p[k]; !set && len(v) > 0 {
			p[k] = v[0]
		}
	}
	return p, nil
}

func parseJSON(body io.Reader, p params) error {
	var m map[string]json.RawMessage
	if err := json.NewDecoder(body).Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("json: %w", err)
	}
	for k, raw := range m {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			p[k] = s
			continue
		}
		p[k] = string(raw)
	}
	return nil
}

// bearerOr returns the Authorization bearer token, or fallback (the token
// form field) when there is none.
func bearerOr(r *http.Request, fallback string) string {
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return fallback
}

// writeOK answers {"ok":true} with fields added.
func writeOK(w http.ResponseWriter, fields map[string]any) {
	out := map[string]any{"ok": true}
	for k, v := range fields {
		out[k] = v
	}
	writeJSON(w, out)
}

// writeError answers {"ok":false,"error":code} with status 200, as the Web
// API does.
func writeError(w http.ResponseWriter, code string) {
	writeJSON(w, map[string]any{"ok": false, "error": code})
}

func writeJSON(w http.ResponseWriter, v any) { writeStatus(w, http.StatusOK, v) }

func writeStatus(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fake slack: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
