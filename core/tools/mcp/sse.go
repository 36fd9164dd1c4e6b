package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errEventTooLarge ends a stream holding an event over MaxSSEEvent.
var errEventTooLarge = fmt.Errorf("an SSE event of the server exceeded %d bytes", MaxSSEEvent)

// readSSE reads the Server-Sent Events of r and calls fn with each
// event's type ("" when it names none) and data, until fn returns false,
// r ends (nil) or fails. An event is at most max bytes as sent: its lines
// with their endings, whichever ("\n", "\r\n" or "\r").
func readSSE(r io.Reader, max int, fn func(event string, data []byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(4<<10, max+2)), max+2)
	sc.Split(splitSSELine)
	var (
		event   string
		data    []byte
		hasData bool
		size    int
	)
	for sc.Scan() {
		line := sc.Bytes()
		if size += len(line) + 1; size > max {
			return errEventTooLarge
		}
		if len(line) == 0 {
			if hasData && !fn(event, data) {
				return nil
			}
			event, data, hasData, size = "", nil, false, 0
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "": // a comment
		case "event":
			event = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return errEventTooLarge
	} else if err != nil {
		return err
	}
	if hasData { // the stream ended without the blank line
		fn(event, data)
	}
	return nil
}

// splitSSELine splits at "\r\n", "\n" or "\r", waiting for the byte
// after a final '\r' to tell the first from the last.
func splitSSELine(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0 && atEOF && len(data) > 0:
		return len(data), data, nil
	case i < 0:
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data) && data[i+1] == '\n':
		return i + 2, data[:i], nil
	case i+1 == len(data) && !atEOF:
		return 0, nil, nil
	}
	return i + 1, data[:i], nil
}
