//go:build !linux

package startup

import "time"

// minorFaults is not counted here: 0.
func minorFaults() int64 { return 0 }

// mainThreadTime is not known here.
func mainThreadTime() (time.Duration, bool) { return 0, false }
