// Package limits holds the bounds on what comes into a benchline process
// from outside: source lines and files, model replies, files read from
// disk. Each has a default and a setting (internal/config's limits
// section, or its environment variable); the commands set them once at
// start (Set), and the readers that enforce them ask Get. The table of
// limits, defaults and settings is in README.md, "Limits".
package limits

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// Defaults.
const (
	// DefaultLineBytes bounds one line (one record) of a source file:
	// 16 MiB, far above any benchmark's longest item, low enough that a
	// build's memory stays under its budget (docs/PERFORMANCE.md).
	DefaultLineBytes = 16 << 20
	// DefaultSourceFiles bounds the files one source location lists.
	DefaultSourceFiles = 10_000
	// DefaultSourceBytes bounds one source file (a local file, an http
	// body, an S3 object): 1 GiB. The benchmarks' real source files are a
	// few MB each (the largest, BFCL v4's live_multiple, is 3.9 MB), and
	// data hubs cut larger datasets into shards of a few hundred MB; a
	// build stages one file at a time through a temporary file, so this
	// is also the worker's staging disk per build.
	DefaultSourceBytes = 1 << 30
	// DefaultReplyBytes bounds one model (or judge) reply's HTTP body:
	// 1 MiB, several times a 100k-token reasoning reply; a shard of
	// replies at the limit stays within its memory budget
	// (docs/PERFORMANCE.md; at 8 MiB a 14-sample shard took 1 GB).
	DefaultReplyBytes = 1 << 20
	// FileBytes bounds a file the CLI reads whole: a board, a providers
	// file, a configuration file. Fixed; such files are a few KiB.
	FileBytes = 1 << 20
)

// Limits are the settable bounds. A zero field means its default.
type Limits struct {
	// LineBytes is limits.max_line_bytes (BENCHLINE_MAX_LINE_BYTES).
	LineBytes int64 `yaml:"max_line_bytes"`
	// SourceFiles is limits.max_source_files (BENCHLINE_MAX_SOURCE_FILES).
	SourceFiles int `yaml:"max_source_files"`
	// SourceBytes is limits.max_source_bytes (BENCHLINE_MAX_SOURCE_BYTES).
	SourceBytes int64 `yaml:"max_source_bytes"`
	// ReplyBytes is limits.max_reply_bytes (BENCHLINE_MAX_REPLY_BYTES).
	ReplyBytes int64 `yaml:"max_reply_bytes"`
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.LineBytes <= 0 {
		l.LineBytes = DefaultLineBytes
	}
	if l.SourceFiles <= 0 {
		l.SourceFiles = DefaultSourceFiles
	}
	if l.SourceBytes <= 0 {
		l.SourceBytes = DefaultSourceBytes
	}
	if l.ReplyBytes <= 0 {
		l.ReplyBytes = DefaultReplyBytes
	}
	return l
}

var current atomic.Pointer[Limits]

// Set makes l (zero fields: their defaults) the process's limits.
func Set(l Limits) {
	l = l.WithDefaults()
	current.Store(&l)
}

// Get returns the process's limits (the defaults until Set is called).
func Get() Limits {
	if l := current.Load(); l != nil {
		return *l
	}
	return Limits{}.WithDefaults()
}

// ErrTooLarge is wrapped by every error of a file over its size limit.
var ErrTooLarge = errors.New("limits: too large")

// ReadFile reads r whole (a file named name in errors), refusing one of
// more than max bytes without reading further: memory never follows the
// file.
func ReadFile(r io.Reader, name string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes: %w", name, max, ErrTooLarge)
	}
	return b, nil
}
