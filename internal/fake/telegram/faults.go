package telegram

import (
	"net/http"
	"strconv"
	"time"
)

// injectFault answers the request with the next fault queued for method and
// reports whether it did.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request, method, chat string) bool {
	s.mu.Lock()
	queue := s.faults[method]
	if len(queue) == 0 {
		s.mu.Unlock()
		return false
	}
	f := queue[0]
	s.faults[method] = queue[1:]
	release, closed := s.release, s.closed
	s.mu.Unlock()

	switch f {
	case FaultTooMany:
		s.mu.Lock()
		s.penalty[chat] = time.Now().Add(time.Duration(s.opts.RetryAfter) * s.opts.RetryAfterUnit)
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, "Too Many Requests: retry after "+strconv.Itoa(s.opts.RetryAfter), s.opts.RetryAfter)
	case FaultServer:
		writeError(w, http.StatusInternalServerError, "Internal Server Error", 0)
	case FaultConflict:
		writeError(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0)
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true,"result":[{"update_id":`))
	case FaultHang:
		select {
		case <-release:
			return false // released: answer normally
		case <-closed:
		case <-r.Context().Done():
		}
		writeError(w, http.StatusBadGateway, "Bad Gateway", 0)
	default:
		return false
	}
	return true
}
