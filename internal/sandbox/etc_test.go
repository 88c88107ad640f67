package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPrepareEtc(t *testing.T) {
	src := t.TempDir()
	write := func(rel string, perm os.FileMode) {
		t.Helper()
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	write("passwd", 0o644)
	write("shadow", 0o644)  // sensitive even when world-readable
	write("gshadow", 0o600) // not world-readable
	write("ssl/certs/ca.pem", 0o644)
	write("ssl/private/key.pem", 0o644) // sensitive directory
	write("app/secret.conf", 0o640)
	write("app/public.conf", 0o644)
	write("locked/inner.conf", 0o644)
	if err := os.Chmod(filepath.Join(src, "locked"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/share/zoneinfo/UTC", filepath.Join(src, "localtime")); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	dst, err := prepareEtc(src, root)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		"passwd": true, "ssl/certs/ca.pem": true, "app/public.conf": true,
		"shadow": false, "gshadow": false, "ssl/private": false, "app/secret.conf": false,
		"locked": false,
	} {
		_, err := os.Lstat(filepath.Join(dst, rel))
		if got := err == nil; got != want {
			t.Errorf("%s present = %v, want %v", rel, got, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(dst, "localtime")); err != nil || l != "/usr/share/zoneinfo/UTC" {
		t.Errorf("localtime symlink = %q, %v", l, err)
	}
	if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("copy root mode: %v %v", st, err)
	}
}

// A copy left by a worker that died is removed by the next Sandbox; a live
// worker's copy is kept.
func TestSweepStaleEtc(t *testing.T) {
	root := t.TempDir()
	dead := filepath.Join(root, etcPrefix+"999999999-abc")
	live := filepath.Join(root, etcPrefix+"1-abc") // pid 1 always exists
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(d, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepStaleEtc(root)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("stale copy kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live copy removed: %v", err)
	}
}
