package main

import (
	"regexp"
	"strconv"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// tally is what became of the burst's messages, from the replies sent.
type tally struct {
	messages     int // in the burst
	replies      int // sent to the burst's chats
	lost         int // messages that got no reply
	merged       int // replies that answer two or more messages
	duplicated   int // messages answered more than once
	misrouted    int // replies naming a message of another chat
	unidentified int // replies naming no message of the burst
}

// ok reports that every message got exactly one reply of its own.
func (t tally) ok() bool {
	return t.lost == 0 && t.merged == 0 && t.duplicated == 0 && t.misrouted == 0 && t.unidentified == 0
}

// messageRef finds the burst's message names ("m-17") in a reply.
var messageRef = regexp.MustCompile(`\bm-(\d+)\b`)

// tallyReplies counts, over the sendMessage calls to the burst's chats
// (firstChat … firstChat+chats-1, message i in chat firstChat+i%chats),
// which messages were answered how often and by which replies.
func tallyReplies(sent []faketg.Sent, messages, chats int) tally {
	t := tally{messages: messages}
	answered := make([]int, messages)
	for _, s := range sent {
		if s.Method != "sendMessage" || s.ChatID < firstChat || s.ChatID >= int64(firstChat+chats) {
			continue
		}
		t.replies++
		seen := map[int]bool{}
		for _, m := range messageRef.FindAllStringSubmatch(s.Plain, -1) {
			i, err := strconv.Atoi(m[1])
			if err != nil || i >= messages || seen[i] {
				continue
			}
			seen[i] = true
			answered[i]++
			if int64(firstChat+i%chats) != s.ChatID {
				t.misrouted++
			}
		}
		switch {
		case len(seen) == 0:
			t.unidentified++
		case len(seen) > 1:
			t.merged++
		}
	}
	for _, n := range answered {
		switch {
		case n == 0:
			t.lost++
		case n > 1:
			t.duplicated++
		}
	}
	return t
}
