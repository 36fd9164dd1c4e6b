package tzdata

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func unzipped(t *testing.T) []byte {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEmbeddedIsTheToolchains: the embedded database is the zoneinfo.zip of
// the Go toolchain that builds the bot, the one time/tzdata would embed;
// after a Go upgrade run go generate ./internal/tzdata.
func TestEmbeddedIsTheToolchains(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Skipf("the toolchain's zoneinfo.zip: %v", err)
	}
	if !bytes.Equal(unzipped(t), want) {
		t.Error("zoneinfo.zip.gz is not the toolchain's lib/time/zoneinfo.zip: run go generate ./internal/tzdata")
	}
}

// TestEveryZoneFromTheEmbeddedDatabase: findEntry reads every zone of the
// database as archive/zip does, and each loads; embedded (which gunzips
// first) finds the first, a middle and the last.
func TestEveryZoneFromTheEmbeddedDatabase(t *testing.T) {
	b := unzipped(t)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) < 300 {
		t.Fatalf("%d zones in the database", len(zr.File))
	}
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		want, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, err := findEntry(bytes.NewReader(b), f.Name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("findEntry(%q): %d bytes, %v; want the entry's %d bytes", f.Name, len(got), err, len(want))
		}
		loc, err := time.LoadLocationFromTZData(f.Name, got)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if _, off := at.In(loc).Zone(); off < -12*3600 || off > 14*3600 {
			t.Errorf("%s: offset %d", f.Name, off)
		}
	}
	for _, f := range []*zip.File{zr.File[0], zr.File[len(zr.File)/2], zr.File[len(zr.File)-1]} {
		if _, ok := embedded(f.Name); !ok {
			t.Errorf("embedded(%q) not found", f.Name)
		}
	}
}

// TestNoZoneOutsideTheDatabase: names that are not entries (or try to
// leave the database) are not found, and LoadLocation gives time's error.
func TestNoZoneOutsideTheDatabase(t *testing.T) {
	for _, name := range []string{"", "Europe", "Europe/", "Nowhere/Atlantis", "../Europe/Berlin", "/etc/localtime", "Europe/Berlin\x00"} {
		if _, ok := embedded(name); ok {
			t.Errorf("embedded(%q) found a zone", name)
		}
	}
	if _, err := LoadLocation("Nowhere/Atlantis"); err == nil {
		t.Error(`LoadLocation("Nowhere/Atlantis") = nil error`)
	}
}

// TestLoadLocation: a zone loads with the offsets the database gives it.
func TestLoadLocation(t *testing.T) {
	loc, err := LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	summer := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).In(loc)
	if name, off := summer.Zone(); name != "CEST" || off != 2*3600 {
		t.Errorf("Europe/Berlin in July: %s %d; want CEST 7200", name, off)
	}
	for _, name := range []string{"UTC", "Local"} {
		if _, err := LoadLocation(name); err != nil {
			t.Errorf("LoadLocation(%q): %v", name, err)
		}
	}
}

// TestFindEntryRefusesCompressedEntries: an entry the zip stores
// compressed (never in Go's database) is an error, not garbage.
func TestFindEntryRefusesCompressedEntries(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("Europe/Berlin") // deflated, with a data descriptor
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("TZif"))
	zw.Close()
	if _, err := findEntry(&buf, "Europe/Berlin"); err == nil || err == errNotFound {
		t.Errorf("findEntry of a deflated entry: %v; want an error that says so", err)
	}
}

// TestLocalWhenTheSystemHasNoZone: TZ names a zone the runtime could not
// load (time.Local fell back to UTC): the embedded copy gives it, as
// time/tzdata did. A zone the runtime loaded, no TZ, and an unknown name
// leave time.Local alone.
func TestLocalWhenTheSystemHasNoZone(t *testing.T) {
	env := func(v string, set bool) func(string) (string, bool) {
		return func(string) (string, bool) { return v, set }
	}
	loc, ok := Local(env("Europe/Berlin", true), time.UTC)
	if !ok || loc.String() != "Europe/Berlin" {
		t.Fatalf("Local(TZ=Europe/Berlin, runtime fell back to UTC) = %v, %v; want Europe/Berlin", loc, ok)
	}
	if _, off := time.Date(2026, 7, 1, 12, 0, 0, 0, loc).Zone(); off != 2*3600 {
		t.Errorf("Berlin's summer offset = %d, want 7200", off)
	}
	if loc, ok := Local(env(":Asia/Tokyo", true), time.UTC); !ok || loc.String() != "Asia/Tokyo" {
		t.Errorf("Local(TZ=:Asia/Tokyo) = %v, %v", loc, ok)
	}
	berlin := loc
	for name, c := range map[string]struct {
		getenv  func(string) (string, bool)
		current *time.Location
	}{
		"no TZ":                 {env("", false), time.UTC},
		"empty TZ":              {env("", true), time.UTC},
		"TZ=UTC":                {env("UTC", true), time.UTC},
		"a file path":           {env("/etc/localtime", true), time.UTC},
		"unknown zone":          {env("Mars/Olympus_Mons", true), time.UTC},
		"the runtime loaded it": {env("Europe/Berlin", true), berlin},
	} {
		if loc, ok := Local(c.getenv, c.current); ok {
			t.Errorf("%s: Local = %v, want time.Local left alone", name, loc)
		}
	}
}
