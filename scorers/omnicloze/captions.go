package omnicloze

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/scorers"
)

// CaptionsPrefix starts the model name of a run whose captions are read
// from a file instead of asked of a model, as the original's protocol
// allows (captions written by any captioner, then judged): the model
// "captions/<key>" reads the JSON-lines file at <key> in benchline's
// object store, one {"item_id": "...", "caption": "..."} per line. An item
// the file has no caption for is a bad sample (reported, not scored); so
// is every item of a file that is missing or does not parse. The run id
// names the file by its key: a file rewritten under the same key is not
// noticed by a finished run (each result records the sha256 it read).
const CaptionsPrefix = "captions/"

// captionLine is one line of a captions file.
type captionLine struct {
	ItemID  *string `json:"item_id"`
	Caption *string `json:"caption"`
}

// captionFile is one parsed captions file.
type captionFile struct {
	sha      string
	captions map[string]string
	err      error // a permanent error: every item of the file is a bad sample
}

// captionFiles caches the captions files a worker has read, by key.
type captionFiles struct {
	mu    sync.Mutex
	files map[string]*captionFile
}

// fileCaption returns the caption of item id in the captions file at key,
// and the file's sha256. A missing file, a line that does not parse and a
// missing item wrap scorers.ErrBadSample; other store errors are returned
// as they are (retried, then reported as infrastructure failures).
func (t Task) fileCaption(ctx context.Context, key, id string) (string, string, error) {
	if t.Store == nil {
		return "", "", fmt.Errorf("captions file %s: this worker has no object store to read it from", key)
	}
	f, err := t.files.load(ctx, t.Store, key)
	if err != nil {
		return "", "", err
	}
	if f.err != nil {
		return "", f.sha, fmt.Errorf("%w: %w", f.err, scorers.ErrBadSample)
	}
	c, ok := f.captions[id]
	if !ok {
		return "", f.sha, fmt.Errorf("captions file %s has no caption for item %s: %w", key, id, scorers.ErrBadSample)
	}
	return c, f.sha, nil
}

// load reads and parses the file at key once per worker; a transient store
// error is not cached.
func (c *captionFiles) load(ctx context.Context, store blob.Store, key string) (*captionFile, error) {
	if c == nil { // a Task not made by NewTask: no cache
		c = &captionFiles{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.files[key]; ok {
		return f, nil
	}
	b, err := blob.GetBytes(ctx, store, key)
	var f *captionFile
	switch {
	case errors.Is(err, blob.ErrNotFound):
		f = &captionFile{err: fmt.Errorf("captions file %s does not exist in the store", key)}
	case err != nil:
		return nil, fmt.Errorf("captions file %s: %w", key, err)
	default:
		f = parseCaptions(b, key)
	}
	if c.files == nil {
		c.files = map[string]*captionFile{}
	}
	c.files[key] = f
	return f, nil
}

// parseCaptions parses a captions file (name names it in errors): one JSON
// object {"item_id", "caption"} per non-blank line, both strings, item ids
// non-empty and unique, no other field. The first broken rule makes the
// whole file unusable.
func parseCaptions(b []byte, name string) *captionFile {
	sum := sha256.Sum256(b)
	f := &captionFile{sha: hex.EncodeToString(sum[:]), captions: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l captionLine
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err := dec.Decode(&l)
		switch {
		case err != nil:
			f.err = fmt.Errorf("captions file %s:%d: not a {\"item_id\", \"caption\"} object: %v", name, n, err)
		case dec.More():
			f.err = fmt.Errorf("captions file %s:%d: more than one JSON value on the line", name, n)
		case l.ItemID == nil || strings.TrimSpace(*l.ItemID) == "":
			f.err = fmt.Errorf("captions file %s:%d: missing or empty \"item_id\"", name, n)
		case l.Caption == nil:
			f.err = fmt.Errorf("captions file %s:%d: item %s has no \"caption\"", name, n, *l.ItemID)
		default:
			if _, dup := f.captions[*l.ItemID]; dup {
				f.err = fmt.Errorf("captions file %s:%d: item %s has a second caption", name, n, *l.ItemID)
			}
		}
		if f.err != nil {
			return f
		}
		f.captions[*l.ItemID] = *l.Caption
	}
	if err := sc.Err(); err != nil {
		f.err = fmt.Errorf("captions file %s: %v", name, err)
	}
	return f
}
