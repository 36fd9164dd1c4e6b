package tzdata

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// localEntry is a zip local file header of a stored entry name declaring
// size bytes, followed by data.
func localEntry(name string, size uint32, data string) string {
	var h [30]byte
	binary.LittleEndian.PutUint32(h[0:], 0x04034b50)
	binary.LittleEndian.PutUint32(h[18:], size)
	binary.LittleEndian.PutUint32(h[22:], size)
	binary.LittleEndian.PutUint16(h[26:], uint16(len(name)))
	return string(h[:]) + name + data
}

// TestFindEntryOnMalformedData: a truncated header, name or body, and an
// entry declaring 4 GB (over maxZone) are not found, without reading or
// allocating what they declare.
func TestFindEntryOnMalformedData(t *testing.T) {
	for name, data := range map[string]string{
		"empty":          "",
		"short header":   localEntry("UTC", 3, "abc")[:20],
		"short name":     localEntry("UTC", 3, "abc")[:31],
		"short body":     localEntry("UTC", 3, "ab"),
		"4 GB entry":     localEntry("UTC", 1<<32-1, "abc"),
		"over maxZone":   localEntry("UTC", maxZone+1, "abc"),
		"not a header":   "PK\x01\x02" + localEntry("UTC", 3, "abc")[4:],
		"another's body": localEntry("Europe/Paris", 3, "abc") + localEntry("UTC", 9, "ab"),
	} {
		t.Run(name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(1, func() {
				if data, err := findEntry(strings.NewReader(data), "UTC"); !errors.Is(err, errNotFound) {
					t.Errorf("findEntry = %q, %v; want errNotFound", data, err)
				}
			})
			if allocs > 20 {
				t.Errorf("%v allocations", allocs)
			}
		})
	}
	if data, err := findEntry(strings.NewReader(localEntry("Europe/Paris", 3, "abc")+localEntry("UTC", 2, "ok")), "UTC"); err != nil || string(data) != "ok" {
		t.Errorf("findEntry = %q, %v; want the second entry", data, err)
	}
}
