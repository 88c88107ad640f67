package release

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseDest: a destination either fails with ErrDest naming it, or
// parses to a Dest whose String parses back to the same Dest; a directory
// is absolute and clean.
func FuzzParseDest(f *testing.F) {
	for _, s := range []string{"s3://bucket/prefix", "s3://b", "/tmp/x/../y", "rel", "", "s3://u:p@b/x", "http://h/x", "s3:///x", "s3://b/p?q=1", "s3://b/a%3Fb", "s3://b/a%2525", "s3://b/a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDest(s)
		if err != nil {
			if !errors.Is(err, ErrDest) {
				t.Fatalf("ParseDest(%q): %v does not wrap ErrDest", s, err)
			}
			return
		}
		if d.IsS3() == (d.Dir != "") {
			t.Fatalf("ParseDest(%q) = %+v: neither or both kinds", s, d)
		}
		if !d.IsS3() && (!filepath.IsAbs(d.Dir) || filepath.Clean(d.Dir) != d.Dir) {
			t.Fatalf("ParseDest(%q) = %+v: directory not absolute and clean", s, d)
		}
		again, err := ParseDest(d.String())
		if err != nil || again != d {
			t.Fatalf("ParseDest(%q) = %+v, but its String %q parses to %+v, %v", s, d, d.String(), again, err)
		}
	})
}

// FuzzDirStoreKey: a key either is refused or names a path strictly below
// the store's root.
func FuzzDirStoreKey(f *testing.F) {
	for _, s := range []string{"a/b.parquet", "../x", "a/../../x", "/abs", "", "a//b", "./a", "a/.", "a\\..\\b", ".."} {
		f.Add(s)
	}
	root := "/srv/releases"
	d := DirStore{Root: root}
	f.Fuzz(func(t *testing.T, key string) {
		p, err := d.path(key)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("key %q maps to %s, outside %s", key, p, root)
		}
	})
}
