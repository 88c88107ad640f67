package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/benchline/benchline", Version: "v0.0.0-20261127085000-075469c3d1e2+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "075469c3d1e2"},
			{Key: "vcs.time", Value: "2026-11-27T08:50:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  Info
	}{
		{"linker values win", "v1.2.3", "abc", "2026-11-01T00:00:00Z", stamped,
			Info{Version: "v1.2.3", Commit: "abc", GoVersion: "go1.26.8", BuildDate: "2026-11-01T00:00:00Z", Modified: true, Stamped: StampedLdflags}},
		{"build information fills the rest", "", "", "", stamped,
			Info{Version: "v0.0.0-20261127085000-075469c3d1e2+dirty", Commit: "075469c3d1e2", GoVersion: "go1.26.8", BuildDate: "2026-11-27T08:50:00Z", Modified: true, Stamped: StampedVCS}},
		{"devel version and no vcs: unknown", "", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: Unknown, Commit: Unknown, GoVersion: "go1.26.8", BuildDate: Unknown, Stamped: StampedNone}},
		{"-buildvcs=false: no vcs settings", "", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "GOOS", Value: "linux"}}},
			Info{Version: Unknown, Commit: Unknown, GoVersion: "go1.26.8", BuildDate: Unknown, Stamped: StampedNone}},
		{"git describe --dirty", "075469c-dirty", "075469c3d1e2", "", &debug.BuildInfo{GoVersion: "go1.26.8"},
			Info{Version: "075469c-dirty", Commit: "075469c3d1e2", GoVersion: "go1.26.8", BuildDate: Unknown, Modified: true, Stamped: StampedLdflags}},
		{"no build information", "v2", "", "", nil,
			Info{Version: "v2", Commit: Unknown, GoVersion: Info{}.GoVersion, BuildDate: Unknown, Stamped: StampedNone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := from(tc.version, tc.commit, tc.date, tc.bi)
			if tc.bi == nil {
				if got.GoVersion == "" {
					t.Fatal("GoVersion empty without build information: want runtime.Version()")
				}
				tc.want.GoVersion = got.GoVersion
			}
			if got != tc.want {
				t.Fatalf("from() = %+v\nwant      %+v", got, tc.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "v1.2.3", Commit: "abc", GoVersion: "go1.26.8", BuildDate: "2026-11-01T00:00:00Z", Modified: true}
	if got, want := i.String(), "benchline v1.2.3 (commit abc+modified, built 2026-11-01T00:00:00Z, go1.26.8)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	// A binary without a commit says how to build one with it.
	none := from("", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}})
	if got, want := none.String(), "benchline unknown (commit unknown, built unknown, go1.26.8); "+NotStampedHint; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}
