package config

import (
	"errors"
	"strings"
	"testing"
)

// sched is a valid schedules list of one entry; tests break one key.
const sched = "schedules:\n  - {name: a, cron: \"@daily\", conversation: \"console:local\", prompt: hi}\n"

func TestScheduleErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name string
		src  string
		key  string
		line int
		msg  string
	}{
		{"bad cron", sched + "  - {name: b, cron: \"61 * * * *\", conversation: \"console:local\", prompt: hi}\n",
			"schedules[1].cron", 3, "61"},
		{"bad descriptor", "schedules:\n  - name: a\n    cron: \"@fortnightly\"\n    conversation: \"console:local\"\n    prompt: hi\n",
			"schedules[0].cron", 3, "@fortnightly"},
		{"tz prefix", "schedules: [{name: a, cron: \"CRON_TZ=UTC 0 9 * * *\", conversation: \"console:local\", prompt: hi}]\n",
			"schedules[0].cron", 1, "timezone key"},
		{"bad timezone", "schedules: [{name: a, cron: \"@daily\", timezone: Mars/Olympus, conversation: \"console:local\", prompt: hi}]\n",
			"schedules[0].timezone", 1, "IANA"},
		{"missing cron", "schedules: [{name: a, conversation: \"console:local\", prompt: hi}]\n",
			"schedules[0].cron", 0, "required"},
		{"unknown gateway", "schedules: [{name: a, cron: \"@daily\", conversation: \"irc:chan\", prompt: hi}]\n",
			"schedules[0].conversation", 1, `unknown gateway "irc"`},
		{"bad conversation", "schedules: [{name: a, cron: \"@daily\", conversation: \"console\", prompt: hi}]\n",
			"schedules[0].conversation", 1, "gateway:chat[:thread]"},
		{"duplicate name", sched + "  - {name: a, cron: \"@hourly\", conversation: \"console:local\", prompt: hi}\n",
			"schedules[1].name", 3, "also schedules[0]"},
		{"bad name", "schedules: [{name: \"a b\", cron: \"@daily\", conversation: \"console:local\", prompt: hi}]\n",
			"schedules[0].name", 1, "letters, digits"},
		{"missing prompt", "schedules: [{name: a, cron: \"@daily\", conversation: \"console:local\"}]\n",
			"schedules[0].prompt", 0, "required"},
		{"unknown key", "schedules: [{name: a, cron: \"@daily\", conversation: \"console:local\", prompt: hi, every: 1h}]\n",
			"schedules[0].every", 1, "unknown key"},
		{"schedule as approver", "hitl: {approvers: [\"console:local\", \"schedule:a\"]}\n",
			"hitl.approvers[1]", 1, "never an approver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), noEnv, specs())
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Parse = %v; want *Error", err)
			}
			if e.Key != tt.key || (tt.line != 0 && e.Line != tt.line) || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got Key=%q Line=%d Msg=%q\nwant Key=%q Line=%d Msg~%q", e.Key, e.Line, e.Msg, tt.key, tt.line, tt.msg)
			}
		})
	}
}

func TestSchedulesParse(t *testing.T) {
	c := mustParse(t, "schedules:\n  - name: disk\n    cron: \"@every 30s\"\n    timezone: Europe/Berlin\n"+
		"    conversation: \"console:local\"\n    prompt: check the disk\n", noEnv)
	want := Schedule{Name: "disk", Cron: "@every 30s", Timezone: "Europe/Berlin", Conversation: "console:local", Prompt: "check the disk"}
	if len(c.Schedules) != 1 || c.Schedules[0] != want {
		t.Errorf("Schedules = %+v, want [%+v]", c.Schedules, want)
	}
}
