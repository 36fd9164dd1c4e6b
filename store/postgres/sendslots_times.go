package postgres

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// stamp is one reservation under a key: its time (Unix nanoseconds) and
// the ownerTag of the instance that made it (0: not known, another's).
type stamp struct {
	t     int64
	owner uint64
}

// compareStamps orders stamps by time, then owner.
func compareStamps(a, b stamp) int {
	if c := cmp.Compare(a.t, b.t); c != 0 {
		return c
	}
	return cmp.Compare(a.owner, b.owner)
}

// ownerTag is the 64-bit FNV-1a hash of an instance's name, never 0; 0 for
// no name.
func ownerTag(name string) uint64 {
	if name == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name)) //nolint:errcheck // a hash never fails
	return max(h.Sum64(), 1)
}

// ownWindow is l's window for a run of me's own requests: l.Own when it is
// set, under Per, and me is known; 0 otherwise (every run keeps Per).
func ownWindow(l store.SendLimit, me uint64) time.Duration {
	if me != 0 && l.Own > 0 && l.Own < l.Per {
		return l.Own
	}
	return 0
}

// atOrAfter is the index of the first stamp of times (sorted) not before t.
func atOrAfter(times []stamp, t int64) int {
	i, _ := slices.BinarySearchFunc(times, t, func(s stamp, t int64) int { return cmp.Compare(s.t, t) })
	return i
}

// recent is times (sorted) from the first not before since.
func recent(times []stamp, since int64) []stamp {
	return times[atOrAfter(times, since):]
}

// earliest is the first time, not before now, at which one more request
// of me fits every limit given the reservations under each (times[i],
// sorted). Reservations may lie in the future (other requests waiting for
// their slot); a request may take a free slot before them, so a chat held
// back by its own limit does not hold back the token's other chats. The
// candidates are now and the end of each reservation's windows; the last
// of them always fits.
func earliest(now int64, me uint64, limits []store.SendLimit, times [][]stamp) int64 {
	cands := []int64{now}
	for i, l := range limits {
		for _, w := range []time.Duration{l.Per, ownWindow(l, me)} {
			for _, s := range times[i] {
				if c := s.t + int64(w); w > 0 && c > now {
					cands = append(cands, c)
				}
			}
		}
	}
	slices.Sort(cands)
	for _, x := range slices.Compact(cands) {
		ok := true
		for i, l := range limits {
			if !fits(times[i], l, stamp{t: x, owner: me}) {
				ok = false
				break
			}
		}
		if ok {
			return x
		}
	}
	return cands[len(cands)-1] // not reached: see above
}

// fits reports whether a request x keeps times (sorted) within l: with x
// added, no N+1 consecutive requests lie within a window of Per, or of
// the own window (ownWindow) when all of them are x's owner's.
func fits(times []stamp, l store.SendLimit, x stamp) bool {
	all := insertSorted(times, x)
	first := atOrAfter(all, x.t)
	last := first
	for last+1 < len(all) && all[last+1].t == x.t {
		last++
	}
	own := ownWindow(l, x.owner)
	// Only the runs of N+1 that hold an x can be new.
	for j := max(0, first-l.N); j <= last && j+l.N < len(all); j++ {
		run := all[j : j+l.N+1]
		w := l.Per
		if own > 0 && !slices.ContainsFunc(run, func(s stamp) bool { return s.owner != x.owner }) {
			w = own
		}
		if run[l.N].t-run[0].t < int64(w) {
			return false
		}
	}
	return true
}

// insertSorted returns a new slice: times with x in its place.
func insertSorted(times []stamp, x stamp) []stamp {
	i := atOrAfter(times, x.t)
	out := make([]stamp, 0, len(times)+1)
	out = append(out, times[:i]...)
	out = append(out, x)
	return append(out, times[i:]...)
}

// packTimes is the times of stamps as big-endian int64s (a row's times).
func packTimes(stamps []stamp) []byte {
	b := make([]byte, 0, 8*len(stamps))
	for _, s := range stamps {
		b = binary.BigEndian.AppendUint64(b, uint64(s.t))
	}
	return b
}

// packOwned is the (time, owner) pairs of the stamps whose owner is
// known, 16 bytes each (a row's owned).
func packOwned(stamps []stamp) []byte {
	b := make([]byte, 0, 16*len(stamps))
	for _, s := range stamps {
		if s.owner != 0 {
			b = binary.BigEndian.AppendUint64(b, uint64(s.t))
			b = binary.BigEndian.AppendUint64(b, s.owner)
		}
	}
	return b
}

// unpackStamps reverses packTimes and packOwned: each time of times, with
// the owner of a pair of owned at that time (each pair used once), or 0
// when none is (a time written by a gatehouse before schema 24). Trailing
// partial values are dropped.
func unpackStamps(times, owned []byte) []stamp {
	owners := make(map[int64][]uint64, len(owned)/16)
	for ; len(owned) >= 16; owned = owned[16:] {
		t := int64(binary.BigEndian.Uint64(owned))
		owners[t] = append(owners[t], binary.BigEndian.Uint64(owned[8:]))
	}
	out := make([]stamp, 0, len(times)/8)
	for ; len(times) >= 8; times = times[8:] {
		s := stamp{t: int64(binary.BigEndian.Uint64(times))}
		if o := owners[s.t]; len(o) > 0 {
			s.owner, owners[s.t] = o[0], o[1:]
		}
		out = append(out, s)
	}
	return out
}
