package mcp

import (
	"context"
	"time"
)

// RefreshEvery is the least time between two listings of a server's
// tools: a notifications/tools/list_changed that comes sooner after the
// last listing is answered once that time has passed, and those that come
// meanwhile with it (one listing for all). A server that sends the
// notification without end (each listing up to MaxListPages pages of
// MaxJSONBody) then costs one listing a second, not one per notification.
const RefreshEvery = time.Second

// refreshTools lists sess's tools again and offers them, RefreshEvery
// after the last listing (*listed, which it moves) at the soonest. It
// reports false when ctx ended or the session did (ended closed) before
// the listing was due; a listing that fails keeps the tools offered.
func (s *server) refreshTools(ctx context.Context, sess *session, ended <-chan struct{}, listed *time.Time) bool {
	if wait := time.Until(listed.Add(RefreshEvery)); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-ended:
			return false
		case <-t.C:
		}
	}
	*listed = time.Now()
	lctx, cancel := context.WithTimeout(ctx, s.cfg.startTimeout())
	list, err := s.list(lctx, sess.cs)
	cancel()
	if err != nil {
		s.log.Warn().Err(err).Msg("mcp tool list refresh failed")
		return true
	}
	if err := s.install(sess.cs, list); err != nil {
		s.log.Error().Err(err).Msg("mcp tools not refreshed")
		return true
	}
	s.log.Info().Int("tools", len(list)).Msg("mcp tool list changed")
	return true
}
