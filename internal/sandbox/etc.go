package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// etcPrefix names the sanitised copies of /etc under the work root:
// benchline-etc-<worker pid>-<random>.
const etcPrefix = "benchline-etc-"

// prepareEtc copies what the sandbox may see of src (the host's /etc) into
// a new directory under root, once per Sandbox, so that a run mounts /etc
// with one bind instead of a bind plus a mask per hidden entry. bwrap
// re-reads the mount table after every bind, so each mount it saves is
// CPU saved on every run.
//
// The copy keeps directories that are world-readable and -searchable,
// world-readable regular files and every symlink (a link to a hidden file
// dangles in the sandbox). It leaves out the sensitiveEtc paths and
// everything below a directory it leaves out. Sockets, fifos and devices
// are left out too. The copy is a snapshot: a change to the host's /etc
// shows in sandboxes once the worker restarts.
func prepareEtc(src, root string) (string, error) {
	sweepStaleEtc(root)
	dst, err := os.MkdirTemp(root, etcPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	hidden := map[string]bool{}
	for _, p := range sensitiveEtc {
		if rel, err := filepath.Rel("/etc", p); err == nil {
			hidden[filepath.Join(src, rel)] = true
		}
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != src && (os.IsPermission(err) || os.IsNotExist(err)) {
				return nil // unreadable to root too, or gone meanwhile
			}
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if hidden[p] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		mode := info.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil
			}
			return os.Symlink(target, out)
		case mode.IsDir():
			if p == src {
				return nil
			}
			if mode.Perm()&0o005 != 0o005 {
				return filepath.SkipDir
			}
			return os.Mkdir(out, 0o755)
		case mode.IsRegular() && mode.Perm()&0o004 != 0:
			return copyFile(p, out, mode.Perm()&0o755)
		}
		return nil
	})
	if err == nil {
		err = os.Chmod(dst, 0o755)
	}
	if err != nil {
		_ = os.RemoveAll(dst)
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	return dst, nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		if os.IsPermission(err) || os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sweepStaleEtc removes copies left by workers that are no longer running
// (a worker that exits without Close, or is killed).
func sweepStaleEtc(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), etcPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + pidStr); os.IsNotExist(err) && pid > 0 {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}
