package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchline/benchline/internal/blob"
)

// ErrDest is returned (wrapped) for a destination that cannot be used: a
// malformed one, a relative directory, a directory that cannot be created
// or written. Retrying cannot fix it.
var ErrDest = errors.New("release: unusable destination")

// Dest is where releases go: an S3 bucket and prefix, or a local directory
// (on the worker that publishes).
type Dest struct {
	Bucket string `json:"bucket,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	Dir    string `json:"dir,omitempty"` // absolute
}

// ParseDest parses "s3://bucket/prefix" or an absolute directory path.
func ParseDest(s string) (Dest, error) {
	if strings.HasPrefix(s, "s3://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return Dest{}, fmt.Errorf("%w: %q: want s3://bucket/prefix", ErrDest, s)
		}
		if !bucketName(u.Host) {
			return Dest{}, fmt.Errorf("%w: %q: the bucket may hold only letters, digits, '.', '-' and '_'", ErrDest, s)
		}
		prefix := strings.Trim(u.Path, "/")
		if strings.ContainsAny(prefix, "?#%") || strings.Contains(prefix, "//") {
			return Dest{}, fmt.Errorf("%w: %q: the prefix may not hold ?, #, %% or //", ErrDest, s)
		}
		if !printable(prefix) {
			return Dest{}, fmt.Errorf("%w: %q: the prefix may hold only printable UTF-8 (no control characters, escaped or not)", ErrDest, s)
		}
		return Dest{Bucket: u.Host, Prefix: prefix}, nil
	}
	if strings.Contains(s, "://") {
		return Dest{}, fmt.Errorf("%w: %q: want s3://bucket/prefix or a local directory", ErrDest, s)
	}
	if s == "" || !filepath.IsAbs(s) {
		return Dest{}, fmt.Errorf("%w: %q: a local directory must be an absolute path", ErrDest, s)
	}
	return Dest{Dir: filepath.Clean(s)}, nil
}

// bucketName reports whether s holds only the characters S3 bucket names
// may (legacy names included: upper case and '_'). url.Parse has already
// unescaped the host, so this also refuses a port, an IPv6 literal and a
// percent escape, none of which would come back from Dest.String.
func bucketName(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

// printable reports whether s is valid UTF-8 without control characters.
// url.Parse unescapes the path, so "s3://b/a%05" would otherwise give a
// prefix whose String does not parse again, and a key no operator can type.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// IsS3 reports whether d is an S3 destination.
func (d Dest) IsS3() bool { return d.Bucket != "" }

// String returns d as the user writes it.
func (d Dest) String() string {
	if d.IsS3() {
		if d.Prefix == "" {
			return "s3://" + d.Bucket
		}
		return "s3://" + d.Bucket + "/" + d.Prefix
	}
	return d.Dir
}

// URI returns the address of key below d (a path for a local directory).
func (d Dest) URI(key string) string {
	if d.IsS3() {
		return d.String() + "/" + key
	}
	return filepath.Join(d.Dir, filepath.FromSlash(key))
}

// DirStore is a blob.Store over a local directory: keys are slash-separated
// paths below it. Put writes a temporary file in the same directory and
// renames it, so a reader never sees half an object.
type DirStore struct{ Root string }

var _ blob.Store = DirStore{}

func (d DirStore) path(key string) (string, error) {
	clean := path.Clean("/" + key)
	if key == "" || clean == "/" || strings.Contains(key, "\\") || clean != "/"+strings.TrimSuffix(key, "/") {
		return "", fmt.Errorf("release: bad key %q", key)
	}
	p := filepath.Join(d.Root, filepath.FromSlash(clean[1:]))
	if err := NoLinks(d.Root, p); err != nil {
		return "", err
	}
	return p, nil
}

// NoLinks checks that no existing component of p below root (root itself
// excluded: a destination may be a link the user chose) is a symbolic
// link, so that nothing written, renamed or removed at p leaves root.
// Components that do not exist yet are fine: they will be created as
// directories. A link is an error wrapping ErrDest that names it.
func NoLinks(root, p string) error {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s is outside %s", ErrDest, p, root)
	}
	if rel == "." {
		return nil
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil {
			return nil // missing, or a path through a file: what uses p says so
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link; a release is written only inside %s and never through a link", ErrDest, cur, root)
		}
	}
	return nil
}

func (d DirStore) notFound(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release: %s %s: %w", op, key, blob.ErrNotFound)
	}
	return fmt.Errorf("release: %s %s: %w", op, key, err)
}

// Put writes r to key through a temporary file renamed into place.
func (d DirStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+filepath.Base(p)+"-*")
	if err != nil {
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := io.Copy(tmp, ctxReader{ctx, r}); err != nil {
		tmp.Close()
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("release: put %s: %w", key, err)
	}
	return nil
}

// PutIfAbsent is Put when nothing is at key. (Not atomic against another
// writer; releases do not need it to be.)
func (d DirStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	if ok, err := blob.Exists(ctx, d, key); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("release: put %s: %w", key, blob.ErrExists)
	}
	return d.Put(ctx, key, r, size)
}

// Get opens the file at key.
func (d DirStore) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, d.notFound("get", key, err)
	}
	return f, nil
}

// Head returns the size and modification time of the file at key.
func (d DirStore) Head(_ context.Context, key string) (blob.Info, error) {
	p, err := d.path(key)
	if err != nil {
		return blob.Info{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return blob.Info{}, d.notFound("head", key, err)
	}
	if st.IsDir() {
		return blob.Info{}, fmt.Errorf("release: head %s: a directory: %w", key, blob.ErrNotFound)
	}
	return blob.Info{Key: key, Size: st.Size(), Modified: st.ModTime()}, nil
}

// List returns every file below prefix, in lexical order of keys.
func (d DirStore) List(_ context.Context, prefix string) ([]blob.Info, error) {
	var out []blob.Info
	err := filepath.WalkDir(d.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.Root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		st, err := e.Info()
		if err != nil {
			return err
		}
		out = append(out, blob.Info{Key: key, Size: st.Size(), Modified: st.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("release: list %s: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Delete removes the file at key; a missing one is not an error.
func (d DirStore) Delete(_ context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release: delete %s: %w", key, err)
	}
	return nil
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
