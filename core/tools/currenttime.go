package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/tzdata"
)

// currentTime is the current_time tool.
type currentTime struct{ now func() time.Time }

// NewCurrentTime returns the current_time tool. now is its clock; nil means
// time.Now.
func NewCurrentTime(now func() time.Time) Tool {
	if now == nil {
		now = time.Now
	}
	return currentTime{now: now}
}

// Spec describes current_time.
func (currentTime) Spec() Spec {
	return Spec{
		Name:        "current_time",
		Description: "Date and time now, in an IANA timezone if given.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string"}}}`),
		ReadOnly:    true,
	}
}

// Run returns the time in RFC 3339 with the weekday and zone, e.g.
// "2025-03-04T10:00:00+01:00 Tuesday Europe/Berlin".
func (t currentTime) Run(_ context.Context, args json.RawMessage) (string, error) {
	now := t.now()
	tz, err := timezoneArg(args)
	if err != nil {
		return "", err
	}
	if tz != "" {
		// tzdata's: current_time works on images without /usr/share/zoneinfo.
		loc, err := tzdata.LoadLocation(tz)
		if err != nil {
			return "", fmt.Errorf("%w: unknown time zone %q", ErrInvalidArgs, tz)
		}
		now = now.In(loc)
	}
	zone := now.Location().String()
	if zone == "Local" { // the machine's zone has no IANA name to show: use its abbreviation
		zone, _ = now.Zone()
	}
	return now.Format(time.RFC3339) + " " + now.Weekday().String() + " " + zone, nil
}

// timezoneArg returns the timezone argument, decoded strictly; it skips
// decoding the common empty arguments.
func timezoneArg(args json.RawMessage) (string, error) {
	if string(normalizeArgs(args)) == "{}" {
		return "", nil
	}
	var a struct {
		Timezone string `json:"timezone"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	return a.Timezone, nil
}
