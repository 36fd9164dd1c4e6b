package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// maxPollAnswer bounds what one getUpdates answer may be: 100 updates of
// the largest messages are a few MB.
const maxPollAnswer = 64 << 20

// keepPollBuffer is the largest poll buffer kept for the next poll: one
// batch of large updates does not hold its memory afterwards.
const keepPollBuffer = 1 << 20

// allowedUpdatesParam is allowedUpdates as the form sends it, a JSON
// array (the kinds are plain words).
var allowedUpdatesParam = `["` + strings.Join(allowedUpdates, `","`) + `"]`

// inPlace is a JSON value kept as the bytes it was decoded from, not
// copied: they are the poll's buffer, read before the next poll.
type inPlace []byte

// UnmarshalJSON keeps b itself.
func (r *inPlace) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// pollAnswer is the library's APIResponse with the result kept in place.
type pollAnswer struct {
	Ok          bool                         `json:"ok"`
	Result      inPlace                      `json:"result"`
	ErrorCode   int                          `json:"error_code"`
	Description string                       `json:"description"`
	Parameters  *tgbotapi.ResponseParameters `json:"parameters"`
}

// getUpdates makes the library's getUpdates request (the same form; a
// refusal is the same *tgbotapi.Error) and returns its result, the batch,
// as bytes of buf, valid until buf is used again. The library's decoder
// grew a buffer for each answer and copied the batch out of it, and each
// poll brings back every update still in progress: up to 100.
func (g *Gateway) getUpdates(ctx context.Context, buf *bytes.Buffer, offset, secs int) ([]byte, error) {
	form := url.Values{"allowed_updates": {allowedUpdatesParam}}
	if offset != 0 {
		form.Set("offset", strconv.Itoa(offset))
	}
	if secs != 0 {
		form.Set("timeout", strconv.Itoa(secs))
	}
	endpoint := strings.TrimRight(g.cfg.APIURL, "/") + "/bot" + g.cfg.Token + "/getUpdates"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := g.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if buf.Cap() > keepPollBuffer {
		*buf = bytes.Buffer{}
	}
	buf.Reset()
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, maxPollAnswer+1))
	if err != nil {
		return nil, err
	}
	if n > maxPollAnswer {
		return nil, fmt.Errorf("an answer over %d bytes", maxPollAnswer)
	}
	var a pollAnswer
	if err := json.Unmarshal(buf.Bytes(), &a); err != nil {
		return nil, err
	}
	if !a.Ok {
		var params tgbotapi.ResponseParameters
		if a.Parameters != nil {
			params = *a.Parameters
		}
		return nil, &tgbotapi.Error{Code: a.ErrorCode, Message: a.Description, ResponseParameters: params}
	}
	return a.Result, nil
}
