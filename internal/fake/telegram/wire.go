package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
)

// maxBody bounds a request body.
const maxBody = 8 << 20

// params are a request's parameters as strings; JSON-valued parameters
// (reply_markup, allowed_updates) are JSON text, as on the form wire.
type params map[string]string

func (p params) int(key string) int {
	n, _ := strconv.Atoi(p[key])
	return n
}

func (p params) int64(key string) (int64, bool) {
	n, err := strconv.ParseInt(p[key], 10, 64)
	return n, err == nil
}

func (p params) bool(key string) bool {
	b, _ := strconv.ParseBool(p[key])
	return b
}

// parseParams reads the query string and a form-encoded, multipart or JSON
// body (a multipart one up to maxUpload).
func parseParams(r *http.Request) (params, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	limit := int64(maxBody)
	if ct == "multipart/form-data" {
		limit = maxUpload // files: sendDocument, sendPhoto
	}
	r.Body = http.MaxBytesReader(nil, r.Body, limit)
	p := params{}
	switch ct {
	case "application/json":
		if err := parseJSON(r.Body, p); err != nil {
			return nil, err
		}
		r.Form = r.URL.Query()
	case "multipart/form-data":
		if err := r.ParseMultipartForm(maxBody); err != nil {
			return nil, fmt.Errorf("multipart: %w", err)
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, fmt.Errorf("form: %w", err)
		}
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

// envelope is the Bot API's response.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      any             `json:"result,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *responseParams `json:"parameters,omitempty"`
}

type responseParams struct {
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
	RetryAfter      int   `json:"retry_after,omitempty"`
}

func writeResult(w http.ResponseWriter, result any) {
	writeJSON(w, http.StatusOK, envelope{OK: true, Result: result})
}

// writeError answers an error; retryAfter > 0 adds parameters.retry_after.
func writeError(w http.ResponseWriter, code int, description string, retryAfter int) {
	e := envelope{ErrorCode: code, Description: description}
	if retryAfter > 0 {
		e.Parameters = &responseParams{RetryAfter: retryAfter}
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeJSON(w, code, e)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"ok":false,"error_code":500,"description":"fake: encoding"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
