package source

import (
	"fmt"
	"io"

	"github.com/benchline/benchline/internal/limits"
)

// bounded returns rc cut at the process's source size limit
// (limits.max_source_bytes): past it, Read fails with an error naming uri
// that wraps limits.ErrTooLarge, having read one byte more than the limit
// and no further. Every source file a Location opens is read through it:
// a file (or a body without a declared length) never fills the disk.
func bounded(rc io.ReadCloser, uri string) io.ReadCloser {
	max := limits.Get().SourceBytes
	return &capped{ReadCloser: rc, uri: uri, max: max, left: max}
}

type capped struct {
	io.ReadCloser
	uri       string
	max, left int64 // left < 0: past the limit
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.tooLarge()
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.ReadCloser.Read(p)
	if int64(n) > c.left {
		n = int(c.left)
		c.left = -1
		return n, c.tooLarge()
	}
	c.left -= int64(n)
	return n, err
}

func (c *capped) tooLarge() error {
	return fmt.Errorf("source: %s is larger than %d bytes, the limit (limits.max_source_bytes, BENCHLINE_MAX_SOURCE_BYTES); it was not read further: %w",
		c.uri, c.max, limits.ErrTooLarge)
}
