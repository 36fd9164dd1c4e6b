package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// The release build (.goreleaser.yaml) stamps these with -ldflags
// "-X main.version=… -X main.commit=… -X main.date=…": the version, the
// commit's full hash and the commit's date (not the build's, so that a
// rebuild of a tag is the same binary). Each one left empty falls back to
// what the go command recorded in the binary: see versionLine.
var (
	version string
	commit  string
	date    string
)

// stamp is what the build stamped with -ldflags -X.
type stamp struct {
	version, commit, date string
}

// versionLine is what `bot version` prints:
//
//	gatehouse 1.2.3 (commit 0a1b2c…, committed 2026-11-26T23:00:00Z, go1.26.8 linux/amd64)
//
// Fields the build did not stamp come from info, the binary's build
// information: the main module's version (`go install …@v1.2.3` records
// it; a build in a checkout records a pseudo-version from its VCS, or
// nothing, which prints as "devel") and the VCS revision and commit time
// (recorded by `go build` in a git checkout unless -buildvcs=false; a
// revision with uncommitted changes is marked "-dirty"). info may be nil.
func versionLine(s stamp, info *debug.BuildInfo) string {
	v, rev, when, goVersion := s.version, s.commit, s.date, runtime.Version()
	if info != nil {
		if v == "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		var modified bool
		var vcsRev, vcsTime string
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				vcsRev = kv.Value
			case "vcs.time":
				vcsTime = kv.Value
			case "vcs.modified":
				modified = kv.Value == "true"
			}
		}
		if rev == "" && vcsRev != "" {
			rev = vcsRev
			if modified {
				rev += "-dirty"
			}
		}
		if when == "" {
			when = vcsTime
		}
	}
	if v == "" {
		v = "devel"
	}
	parts := make([]string, 0, 3)
	if rev != "" {
		parts = append(parts, "commit "+rev)
	}
	if when != "" {
		parts = append(parts, "committed "+when)
	}
	parts = append(parts, goVersion+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return "gatehouse " + v + " (" + strings.Join(parts, ", ") + ")"
}

// buildVersion is versionLine for this binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionLine(stamp{version: version, commit: commit, date: date}, info)
}
