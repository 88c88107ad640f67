package lang

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/benchline/benchline/internal/sandbox"
)

// tsPackages are the node packages tsc needs in the sandbox.
var tsPackages = []string{"typescript", "@types/node", "undici-types"}

// tsModules returns a directory holding the TypeScript packages that the
// sandbox uid can read. The configured cache usually sits under the
// worker's home (mode 0700), which bwrap, running as the sandbox uid, cannot
// traverse; so the packages are copied once, keyed by their versions, into
// a root-owned, world-readable directory under os.TempDir().
func (r *Runner) tsModules() (string, error) {
	r.tsMu.Lock()
	defer r.tsMu.Unlock()
	if r.tsDir != "" {
		return r.tsDir, nil
	}
	missing := func(err error) error {
		return &sandbox.InfraError{Op: "find tsc", Err: fmt.Errorf("%w: %v", ErrToolchainMissing, err)}
	}
	key := ""
	for _, p := range tsPackages[:2] {
		var pkg struct{ Version string }
		b, err := os.ReadFile(filepath.Join(r.nodeModules, p, "package.json"))
		if err != nil {
			return "", missing(err)
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			return "", missing(err)
		}
		key += "-" + pkg.Version
	}
	dest := filepath.Join(os.TempDir(), fmt.Sprintf("benchline-ts-%d%s", os.Getuid(), key))
	if trusted(dest) {
		r.tsDir = dest
		return dest, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "benchline-ts-copy-")
	if err != nil {
		return "", &sandbox.InfraError{Op: "copy TypeScript packages", Err: err}
	}
	defer os.RemoveAll(tmp)
	for _, p := range tsPackages {
		if err := copyTree(filepath.Join(r.nodeModules, p), filepath.Join(tmp, p)); err != nil {
			return "", &sandbox.InfraError{Op: "copy TypeScript packages", Err: err}
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", &sandbox.InfraError{Op: "copy TypeScript packages", Err: err}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", &sandbox.InfraError{Op: "copy TypeScript packages", Err: err}
	}
	if err := os.Rename(tmp, dest); err != nil && !trusted(dest) {
		return "", &sandbox.InfraError{Op: "install TypeScript packages", Err: err}
	}
	r.tsDir = dest
	return dest, nil
}

// trusted reports whether dir is a complete copy owned by this uid and not
// writable by others (os.TempDir is shared).
func trusted(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm()&0o022 != 0 {
		return false
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, ".complete"))
	return err == nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target)
		}
		return errors.New("unexpected file type: " + p)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
