// Package tzdata loads IANA time zones as time.LoadLocation does, falling
// back to a copy of Go's zone database embedded gzip-compressed when the
// system has none (a container image without /usr/share/zoneinfo,
// Windows). Importing time/tzdata would embed the same database
// uncompressed: 408 KB of the binary where this copy is 95 KB.
package tzdata

import (
	"bufio"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

//go:generate sh -c "gzip -9n < \"$(go env GOROOT)/lib/time/zoneinfo.zip\" > zoneinfo.zip.gz"

// zipped is Go's lib/time/zoneinfo.zip (what time/tzdata embeds),
// gzip-compressed; TestEmbeddedIsTheToolchains keeps it the toolchain's.
//
//go:embed zoneinfo.zip.gz
var zipped string

// maxZone bounds one zone's data; the largest is under 4 KB.
const maxZone = 64 << 10

// LoadLocation is time.LoadLocation (the ZONEINFO variable, then the
// system's zone files), and then the embedded database, as with time/tzdata
// imported.
func LoadLocation(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err == nil {
		return loc, nil
	}
	data, ok := embedded(name)
	if !ok {
		return nil, err
	}
	return time.LoadLocationFromTZData(name, data)
}

// embedded returns the zone file name of the embedded database, reading its
// zip entries (stored, as Go writes it) in order.
func embedded(name string) ([]byte, bool) {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return nil, false
	}
	zr, err := gzip.NewReader(strings.NewReader(zipped))
	if err != nil {
		return nil, false
	}
	data, err := findEntry(bufio.NewReader(zr), name)
	return data, err == nil
}

// errNotFound: the database has no entry of that name.
var errNotFound = errors.New("tzdata: no such zone")

// findEntry reads zip local file headers from r until the stored entry
// name, and returns its contents.
func findEntry(r io.Reader, name string) ([]byte, error) {
	const localHeader = 0x04034b50
	var h [30]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, errNotFound
		}
		if binary.LittleEndian.Uint32(h[0:]) != localHeader {
			return nil, errNotFound // the central directory: every entry read
		}
		flags, method := binary.LittleEndian.Uint16(h[6:]), binary.LittleEndian.Uint16(h[8:])
		size := int64(binary.LittleEndian.Uint32(h[18:]))
		nameLen, extraLen := int64(binary.LittleEndian.Uint16(h[26:])), int64(binary.LittleEndian.Uint16(h[28:]))
		if method != 0 || flags&8 != 0 || size != int64(binary.LittleEndian.Uint32(h[22:])) {
			return nil, fmt.Errorf("tzdata: entry not stored with its size (method %d, flags %#x)", method, flags)
		}
		entry := make([]byte, nameLen)
		if _, err := io.ReadFull(r, entry); err != nil {
			return nil, errNotFound
		}
		if _, err := io.CopyN(io.Discard, r, extraLen); err != nil {
			return nil, errNotFound
		}
		if string(entry) != name || size > maxZone {
			if _, err := io.CopyN(io.Discard, r, size); err != nil {
				return nil, errNotFound
			}
			continue
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, errNotFound
		}
		return data, nil
	}
}

// Local is the zone the TZ variable names when the runtime could not load
// it (a system without zone files, such as the Alpine image) and the
// embedded database has it, and ok; else ok is false and time.Local is
// right as it is. With time/tzdata imported the runtime itself fell back
// to its embedded copy; main assigns the result to time.Local before
// anything else runs, so that logs keep the local time TZ asks for.
func Local(getenv func(string) (string, bool), current *time.Location) (loc *time.Location, ok bool) {
	tz, set := getenv("TZ")
	tz = strings.TrimPrefix(tz, ":")
	if !set || tz == "" || tz == "UTC" || strings.HasPrefix(tz, "/") || current.String() != "UTC" {
		return nil, false
	}
	data, found := embedded(tz)
	if !found {
		return nil, false
	}
	loc, err := time.LoadLocationFromTZData(tz, data)
	return loc, err == nil
}
