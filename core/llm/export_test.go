package llm

import "time"

// SetCascadeClock replaces the cascade's clock in tests.
func SetCascadeClock(c *Cascade, now func() time.Time) { c.now = now }
