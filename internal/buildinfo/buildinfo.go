// Package buildinfo says which benchline this binary is: its version, the
// commit it was built from, the Go version and the build date, for
// `benchline --version`, `benchline version --json`, the worker's first log
// line and its benchline_build_info gauge.
//
// The linker sets the values (-ldflags "-X ..."; the Makefile and
// deploy/docker/Dockerfile do); what it leaves empty comes from the
// module's build information (debug.ReadBuildInfo: the module version,
// vcs.revision and vcs.time that `go build` stamps in a git checkout).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set with -ldflags "-X github.com/benchline/benchline/internal/buildinfo.Version=v1.2.3"
// (and .Commit, .Date: an RFC 3339 time). Empty means "ask debug.ReadBuildInfo".
var (
	Version string
	Commit  string
	Date    string
)

// Unknown stands for a value neither the linker nor the build information has.
const Unknown = "unknown"

// Info describes one build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
	BuildDate string `json:"build_date"`
	// Modified is true when the commit's working tree had uncommitted
	// changes (vcs.modified, or a linker Version ending in -dirty).
	Modified bool `json:"modified"`
	// Stamped says where the commit came from: "ldflags" (make build, the
	// Dockerfile), "vcs" (go build in a git clone: debug.ReadBuildInfo's
	// vcs.revision) or "none". Go stamps no VCS information with
	// -buildvcs=false (in GOFLAGS or `go env`), in a git worktree (its
	// .git is a file, and Go looks for a .git directory), and for go run
	// and go test binaries.
	Stamped string `json:"stamped"`
}

// Where the commit came from (Info.Stamped).
const (
	StampedLdflags = "ldflags"
	StampedVCS     = "vcs"
	StampedNone    = "none"
)

// NotStampedHint is what --version adds when the binary carries no
// commit, so a user knows how to get one.
const NotStampedHint = "no commit stamped: build with `make build`, or `go build` in a git clone " +
	"(not a git worktree) without -buildvcs=false in GOFLAGS or `go env`"

// Get is this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(Version, Commit, Date, bi)
}

// from merges the linker's values over the build information (either may
// be empty or nil).
func from(version, commit, date string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, BuildDate: date, GoVersion: runtime.Version(), Stamped: StampedNone}
	if commit != "" {
		info.Stamped = StampedLdflags
	}
	if bi != nil {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" && s.Value != "" {
					info.Commit, info.Stamped = s.Value, StampedVCS
				}
			case "vcs.time":
				if info.BuildDate == "" {
					info.BuildDate = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	// `git describe --dirty` (the Makefile's and setup.sh's VERSION) marks
	// a modified tree where the build information cannot (no .git in an
	// image build).
	if strings.HasSuffix(version, "-dirty") {
		info.Modified = true
	}
	for _, f := range []*string{&info.Version, &info.Commit, &info.BuildDate} {
		if *f == "" {
			*f = Unknown
		}
	}
	return info
}

// String is the one line `benchline --version` prints; a binary with no
// commit says how to build one that has it (NotStampedHint).
func (i Info) String() string {
	commit := i.Commit
	if i.Modified {
		commit += "+modified"
	}
	line := fmt.Sprintf("benchline %s (commit %s, built %s, %s)", i.Version, commit, i.BuildDate, i.GoVersion)
	if i.Commit == Unknown {
		line += "; " + NotStampedHint
	}
	return line
}

// LogAttrs are the fields of the worker's first log line.
func (i Info) LogAttrs() []any {
	return []any{"version", i.Version, "commit", i.Commit, "go_version", i.GoVersion, "build_date", i.BuildDate, "modified", i.Modified}
}
