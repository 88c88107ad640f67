package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/benchline/benchline/internal/limits"
)

// dirLoc is a local --source directory. Only regular files inside it are
// read: a symbolic link is followed while it stays inside the directory
// (os.Root enforces it, so a link cannot lead out however it is made), and
// a link that leads out of it, a named pipe (FIFO), a socket, a device or a
// directory is refused when a builder opens it, as bad input naming the
// file (ErrInvalid). Files a builder never opens are left alone, whatever
// they are. A file is opened without blocking (O_NONBLOCK), so a FIFO is
// refused at once instead of waiting for a writer that never comes.
type dirLoc struct {
	fsLoc // List and URI; fsys is os.DirFS(base)
}

func (l *dirLoc) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	uri := l.URI(name)
	root, err := os.OpenRoot(l.base)
	if err != nil {
		return nil, fmt.Errorf("source: directory %s: %w", l.base, classifyOS(err))
	}
	defer root.Close()
	st, err := root.Stat(filepath.FromSlash(name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("source: %s: %w", uri, ErrNotFound)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("source: %s: %w (%w)", uri, ErrRefused, err)
	case err != nil:
		return nil, l.cannotFollow(name, err)
	case !st.Mode().IsRegular():
		return nil, notRegular(uri, st.Mode())
	}
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("source: %s: %w", uri, classifyOS(err))
		}
		return nil, l.cannotFollow(name, err)
	}
	// The file may have been replaced since Stat: check what was opened.
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, fmt.Errorf("source: %s: %w", uri, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(uri, st.Mode())
	}
	if max := limits.Get().SourceBytes; st.Size() > max {
		f.Close()
		return nil, fmt.Errorf("source: %s is %d bytes, more than the limit of %d (limits.max_source_bytes, BENCHLINE_MAX_SOURCE_BYTES); it was not read: %w",
			uri, st.Size(), max, limits.ErrTooLarge)
	}
	return bounded(f, uri), nil
}

// cannotFollow is the error of a name os.Root will not open: a symbolic
// link leading out of the directory (or written as an absolute path), a
// loop of links.
func (l *dirLoc) cannotFollow(name string, err error) error {
	uri := l.URI(name)
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("source: %s is a symbolic link that loops: %w (%v)", uri, ErrInvalid, err)
	}
	if target, rerr := os.Readlink(uri); rerr == nil {
		return fmt.Errorf("source: %s is a symbolic link to %s, which leads out of the source directory %s (only regular files inside it are read, and links that stay inside it, written as relative paths): %w",
			uri, target, l.base, ErrInvalid)
	}
	return fmt.Errorf("source: %s cannot be read inside the source directory %s (a symbolic link on its path leads out of it): %w (%v)", uri, l.base, ErrInvalid, err)
}

// notRegular is the error of a file that is not a regular file.
func notRegular(uri string, m fs.FileMode) error {
	kind := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	case m.IsDir():
		kind = "a directory"
	}
	return fmt.Errorf("source: %s is %s, not a regular file; only regular files are read: %w", uri, kind, ErrInvalid)
}

// classifyOS wraps a file system error with the sentinel of its class.
func classifyOS(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w (%w)", ErrNotFound, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w (%w)", ErrRefused, err)
	}
	return err
}
