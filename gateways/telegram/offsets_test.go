package telegram

import (
	"slices"
	"testing"
)

func TestOffsets(t *testing.T) {
	for _, c := range []struct {
		name     string
		start    []int // handed over, in order
		finish   []int // then done, in order
		want     string
		wantSeen []int
	}{
		{"nothing", nil, nil, "0", nil},
		{"all done", []int{10, 11, 12}, []int{10, 11, 12}, "13", []int{10, 11, 12}},
		{"oldest in progress", []int{10, 11, 12}, []int{12, 11}, "10;1,2", []int{10, 11, 12}},
		{"middle in progress", []int{10, 11, 12, 13}, []int{10, 13}, "11;2", []int{9, 10, 11, 12, 13}},
		{"gaps in ids", []int{10, 15, 20}, []int{10, 20}, "15;5", []int{15, 20}},
		{"done twice", []int{10}, []int{10, 10}, "11", []int{10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOffsets(0, nil)
			for _, id := range c.start {
				o.start(id)
			}
			for _, id := range c.finish {
				o.finish(id)
			}
			if got := o.value(); got != c.want {
				t.Fatalf("value = %q, want %q", got, c.want)
			}
			for _, id := range c.wantSeen {
				if !o.seen(id) {
					t.Errorf("update %d not seen", id)
				}
			}
			base, done, err := parseOffsets(c.want)
			if err != nil {
				t.Fatal(err)
			}
			back := newOffsets(base, done)
			if got := back.value(); got != c.want {
				t.Errorf("after a round trip: %q, want %q", got, c.want)
			}
			for _, id := range c.finish {
				if id >= base && !back.seen(id) {
					t.Errorf("done update %d would be replayed after a restart", id)
				}
			}
		})
	}
}

func TestOffsetsGiveUpPastMaxHeld(t *testing.T) {
	o := newOffsets(0, nil)
	o.start(100) // stuck
	var released []int
	for id := 101; id < 101+maxHeld; id++ {
		released = append(released, o.start(id)...)
		o.finish(id)
	}
	if !slices.Equal(released, []int{100}) {
		t.Fatalf("released %v, want the stuck update 100", released)
	}
	if off, _ := o.next(); off != 101+maxHeld {
		t.Fatalf("offset %d, want past every update", off)
	}
	o.finish(100) // its late Done is harmless
	if off, _ := o.next(); off != 101+maxHeld {
		t.Fatalf("offset %d after the late Done", off)
	}
}

func TestParseOffsetsRejectsJunk(t *testing.T) {
	for _, v := range []string{"x", "10;", "10;a", "10;0", "10;-1", ";1"} {
		if _, _, err := parseOffsets(v); err == nil {
			t.Errorf("parseOffsets(%q) accepted it", v)
		}
	}
}

// TestOffsetsAfterRestart: updates re-delivered after a restart are handed
// over again in order; finishing the first must not skip the second just
// because a later one was done before the restart.
func TestOffsetsAfterRestart(t *testing.T) {
	o := newOffsets(1000, []int{1002}) // 1000 and 1001 were in progress, 1002 done
	o.start(1000)
	o.finish(1000) // done before 1001 is handed over again
	if o.seen(1001) {
		t.Fatal("update 1001, in progress at the stop, would be skipped and confirmed: lost")
	}
	if base, _ := o.next(); base != 1001 {
		t.Fatalf("offset = %d, want 1001", base)
	}
	o.start(1001)
	o.finish(1001)
	if !o.seen(1002) {
		t.Fatal("update 1002, done before the stop, would be replayed")
	}
	if base, _ := o.next(); base != 1003 {
		t.Fatalf("offset = %d, want 1003 (past the done 1002)", base)
	}
}

// TestOffsetsPassOverGap: a done update met in a batch moves the offset on,
// over a gap in Telegram's numbering, rather than polling the same batch.
func TestOffsetsPassOverGap(t *testing.T) {
	o := newOffsets(1000, []int{1005}) // 1000 in progress at the stop; no 1001-1004
	o.start(1000)
	o.finish(1000)
	o.pass(1005) // the batch went on to the done 1005
	if base, _ := o.next(); base != 1006 {
		t.Fatalf("offset = %d, want 1006", base)
	}
}
