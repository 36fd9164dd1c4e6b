package main

import (
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

func reply(chat int64, text string) faketg.Sent {
	return faketg.Sent{Method: "sendMessage", ChatID: chat, Plain: text}
}

func TestTallyReplies(t *testing.T) {
	// 4 messages over 2 chats: m-0, m-2 in chat 1001; m-1, m-3 in chat 1002.
	tests := []struct {
		name string
		sent []faketg.Sent
		want tally
	}{
		{"each once", []faketg.Sent{reply(1001, "echo: m-0"), reply(1002, "echo: m-1"), reply(1001, "echo: m-2"), reply(1002, "echo: m-3")},
			tally{messages: 4, replies: 4}},
		{"one lost", []faketg.Sent{reply(1001, "echo: m-0"), reply(1002, "echo: m-1"), reply(1001, "echo: m-2")},
			tally{messages: 4, replies: 3, lost: 1}},
		{"two merged", []faketg.Sent{reply(1001, "echo: m-0 m-2"), reply(1002, "echo: m-1"), reply(1002, "echo: m-3")},
			tally{messages: 4, replies: 3, merged: 1}},
		{"one duplicated", []faketg.Sent{reply(1001, "echo: m-0"), reply(1001, "echo: m-0"), reply(1002, "echo: m-1"), reply(1001, "echo: m-2"), reply(1002, "echo: m-3")},
			tally{messages: 4, replies: 5, duplicated: 1}},
		{"misrouted and unidentified", []faketg.Sent{reply(1002, "echo: m-0"), reply(1002, "echo: m-1"), reply(1001, "echo: m-2"), reply(1002, "echo: m-3"), reply(1001, "the model failed")},
			tally{messages: 4, replies: 5, misrouted: 1, unidentified: 1}},
		{"m-1 is not m-12, edits and other chats ignored", []faketg.Sent{reply(1001, "echo: m-0"), reply(1002, "echo: m-12"), reply(1001, "echo: m-2"), reply(1002, "echo: m-3"),
			{Method: "editMessageText", ChatID: 1002, Plain: "m-1"}, reply(1000, "echo: m-1")},
			tally{messages: 4, replies: 4, lost: 1, unidentified: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tallyReplies(tt.sent, 4, 2)
			if got != tt.want {
				t.Errorf("tally = %+v, want %+v", got, tt.want)
			}
			if got.ok() != (tt.want == tally{messages: 4, replies: 4}) {
				t.Errorf("ok() = %v for %+v", got.ok(), got)
			}
		})
	}
}

func TestParseProc(t *testing.T) {
	m, err := parseStatus("Name:\tbot\nVmPeak:\t  9000 kB\nVmHWM:\t   15360 kB\nVmRSS:\t   14852 kB\nRssAnon:\t    6000 kB\nRssFile:\t    8852 kB\nThreads:\t7\n")
	if err != nil || m != (memory{rssKiB: 14852, hwmKiB: 15360, anonKiB: 6000, fileKiB: 8852}) {
		t.Errorf("parseStatus = %+v, %v", m, err)
	}
	if _, err := parseStatus("Name:\tbot\n"); err == nil {
		t.Error("parseStatus without VmRSS: no error")
	}
	// The command name may hold spaces and parentheses; utime 150 and stime 50 ticks.
	stat := "4242 (bot (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 50 0 0 20 0 7 0 100 1000000 3000"
	if d, err := parseStat(stat); err != nil || d != 2*time.Second {
		t.Errorf("parseStat = %v, %v; want 2s", d, err)
	}
	if _, err := parseStat("4242 bot S"); err == nil {
		t.Error("parseStat of a malformed line: no error")
	}
}

func TestFloor(t *testing.T) {
	for _, tt := range []struct {
		n, chats int
		want     time.Duration
	}{{1000, 100, 33 * time.Second}, {200, 20, 9 * time.Second}, {20, 5, 3 * time.Second}, {1, 1, 0}} {
		if got := floor(tt.n, tt.chats); got != tt.want {
			t.Errorf("floor(%d, %d) = %v, want %v", tt.n, tt.chats, got, tt.want)
		}
	}
}
