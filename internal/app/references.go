package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/source"
)

// ErrNoReferences is returned (wrapped) when a references path holds no
// reference at all.
var ErrNoReferences = errors.New("no references")

// LoadReferences reads every references file at path: a local .jsonl file,
// a local directory (every .jsonl file under it, e.g. a copy of the
// store's references/), or an s3://bucket/key URL of one file or a prefix,
// opened with open. Files are the engine's (references/<dataset>/<version>/
// task-<v>.jsonl) or hand-written (baseline.MemoryReferences.Load). A file
// that cannot be used, or a path with no reference in it, is an error.
func LoadReferences(ctx context.Context, open source.S3Opener, path string) (*baseline.MemoryReferences, error) {
	refs := baseline.NewMemoryReferences()
	var n int
	var err error
	if strings.HasPrefix(path, "s3://") {
		n, err = loadS3References(ctx, open, path, refs)
	} else {
		n, err = loadLocalReferences(path, refs)
	}
	if err != nil {
		return nil, fmt.Errorf("references %s: %w", path, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("references %s: %w (want .jsonl files of reference answers)", path, ErrNoReferences)
	}
	return refs, nil
}

func loadLocalReferences(path string, refs *baseline.MemoryReferences) (int, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	files := []string{path}
	if st.IsDir() {
		files = nil
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	total := 0
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return total, err
		}
		n, err := refs.Load(f, p)
		_ = f.Close()
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func loadS3References(ctx context.Context, open source.S3Opener, uri string, refs *baseline.MemoryReferences) (int, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return 0, fmt.Errorf("want s3://bucket/key")
	}
	if open == nil {
		return 0, errors.New("no S3 configuration to open it with")
	}
	store, err := open(ctx, u.Host, "")
	if err != nil {
		return 0, err
	}
	key := strings.TrimPrefix(u.Path, "/")
	keys := []string{key}
	if !strings.HasSuffix(key, ".jsonl") {
		prefix := key
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		infos, err := store.List(ctx, prefix)
		if err != nil {
			return 0, err
		}
		keys = nil
		for _, info := range infos {
			if strings.HasSuffix(info.Key, ".jsonl") {
				keys = append(keys, info.Key)
			}
		}
		slices.Sort(keys)
	}
	total := 0
	for _, k := range keys {
		n, err := loadStoreReferences(ctx, store, k, "s3://"+u.Host+"/"+k, refs)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// loadStoreReferences adds the references file at key of store, named name
// in errors.
func loadStoreReferences(ctx context.Context, store blob.Store, key, name string, refs *baseline.MemoryReferences) (int, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return refs.Load(rc, name)
}
