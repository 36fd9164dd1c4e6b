package telegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// errNotArray is splitArray's answer for anything but a JSON array whose
// structure it can follow.
var errNotArray = errors.New("not a JSON array")

// splitArray returns the elements of the JSON array b as slices of b, not
// copies: each poll brings back every update still in progress (up to
// 100), and copying and scanning them all again (json.RawMessage) was a
// tenth of the bytes the bot allocated a message in a burst. b must be
// valid JSON, as getUpdates' result is once getUpdates has decoded the
// whole answer with encoding/json; what does not look like an array is an
// error.
func splitArray(b []byte) ([][]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, errNotArray
	}
	var out [][]byte
	depth, start, inString := 0, -1, false
	for i := 1; i < len(b)-1; i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++ // the escaped character
			} else if c == '"' {
				inString = false
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == ',' && depth == 0:
			if start < 0 {
				return nil, errNotArray
			}
			out = append(out, bytes.TrimSpace(b[start:i]))
			start = -1
			continue
		}
		if start < 0 {
			start = i
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 {
				return nil, errNotArray
			}
		}
	}
	if inString || depth != 0 {
		return nil, errNotArray
	}
	if start >= 0 {
		out = append(out, bytes.TrimSpace(b[start:len(b)-1]))
	} else if len(out) > 0 {
		return nil, errNotArray // a trailing comma
	}
	return out, nil
}

// idPrefix is how Telegram begins every update.
var idPrefix = []byte(`{"update_id":`)

// batchUpdateID is updateID for an element of a getUpdates batch (valid
// JSON): Telegram writes update_id first, so the id is read from the
// digits after idPrefix, without decoding the update; any other shape is
// read by updateID.
func batchUpdateID(raw []byte) (int, bool) {
	if rest, ok := bytes.CutPrefix(raw, idPrefix); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > 0 && n < len(rest) && (rest[n] == ',' || rest[n] == '}') {
			if id, err := strconv.Atoi(string(rest[:n])); err == nil {
				return id, true
			}
		}
	}
	return updateID(raw)
}

// decodeBatch splits getUpdates' result into its updates (see splitArray),
// and decodes it the usual way when it cannot.
func decodeBatch(result []byte) ([][]byte, error) {
	if raws, err := splitArray(result); err == nil {
		return raws, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(result, &raws); err != nil {
		return nil, err
	}
	out := make([][]byte, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out, nil
}
