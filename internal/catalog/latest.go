package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchline/benchline/internal/blob"
)

// Pointed is a version a latest pointer names, with what a reader of a
// build's or a publish's output needs to see what changed: its rows and
// when it was built. Rows is -1 when the version's manifest could not be
// found (a pointer left naming a deleted version).
type Pointed struct {
	Version   string    `json:"version"`
	Rows      int64     `json:"rows"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// PointedAt is what m's version looks like from a latest pointer.
func PointedAt(m Manifest) Pointed {
	return Pointed{Version: m.Version, Rows: m.Rows, CreatedAt: m.CreatedAt}
}

// LatestMove is what writing a latest pointer did: From is what it named
// before (nil: nothing), To what it names after. The zero LatestMove says
// latest was not touched (a variant's build or publish).
//
// The rule (docs/ARCHITECTURE.md, "Which version latest names"): latest
// names the last build (or publish) with the benchmark's default
// parameters, a reused version included, even when that version is
// smaller or was built before the one latest named. Nothing moves it
// silently: Line and Warning say what it named before and after.
type LatestMove struct {
	From *Pointed `json:"from,omitempty"`
	To   *Pointed `json:"to,omitempty"`
}

// Touched reports whether latest was written (not a variant).
func (m LatestMove) Touched() bool { return m.To != nil }

// Moved reports whether latest names another version than before (or
// named none).
func (m LatestMove) Moved() bool {
	return m.To != nil && (m.From == nil || m.From.Version != m.To.Version)
}

// Shrank reports whether latest moved to a version with fewer rows.
func (m LatestMove) Shrank() bool {
	return m.Moved() && m.From != nil && m.From.Rows >= 0 && m.To.Rows < m.From.Rows
}

// Back reports whether latest moved to a version built before the one it
// named (a build whose content gives an older version: reused).
func (m LatestMove) Back() bool {
	return m.Moved() && m.From != nil && !m.From.CreatedAt.IsZero() && !m.To.CreatedAt.IsZero() &&
		m.To.CreatedAt.Before(m.From.CreatedAt)
}

// Line is the one line a build or a publish prints about latest, e.g.
// "latest: bfcl@0123456789abcdef (3,641 rows) -> bfcl@fedcba9876543210
// (600 rows)", "latest: bfcl@0123456789abcdef (3,641 rows), unchanged"
// or "latest: (none) -> bfcl@0123456789abcdef (3,641 rows)"; "" when
// latest was not touched.
func (m LatestMove) Line(name string) string {
	switch {
	case m.To == nil:
		return ""
	case !m.Moved():
		return fmt.Sprintf("latest: %s, unchanged", m.To.label(name))
	case m.From == nil:
		return fmt.Sprintf("latest: (none) -> %s", m.To.label(name))
	}
	return fmt.Sprintf("latest: %s -> %s", m.From.label(name), m.To.label(name))
}

// Warning is a line starting "WARNING: " when latest moved back to a
// version built earlier or to one with fewer rows, saying what plain NAME
// now evaluates and how to name the version it named before; "" otherwise.
func (m LatestMove) Warning(name string) string {
	return m.warning(name, fmt.Sprintf("plain %s (eval --dataset %s) now means", name, name))
}

// ReleaseWarning is Warning for a release's latest (DEST/NAME/latest),
// which eval does not read.
func (m LatestMove) ReleaseWarning(name string) string {
	return m.warning(name, fmt.Sprintf("the release's %s/latest now names", name))
}

func (m LatestMove) warning(name, means string) string {
	back, shrank := m.Back(), m.Shrank()
	if !back && !shrank {
		return ""
	}
	var what string
	switch {
	case back && shrank:
		what = fmt.Sprintf("moved back to a version built %s, before the one it named (%s), and shrank from %s to %s rows",
			m.To.CreatedAt.UTC().Format(time.RFC3339), m.From.CreatedAt.UTC().Format(time.RFC3339), Thousands(m.From.Rows), Thousands(m.To.Rows))
	case back:
		what = fmt.Sprintf("moved back to a version built %s, before the one it named (%s)",
			m.To.CreatedAt.UTC().Format(time.RFC3339), m.From.CreatedAt.UTC().Format(time.RFC3339))
	default:
		what = fmt.Sprintf("shrank from %s to %s rows", Thousands(m.From.Rows), Thousands(m.To.Rows))
	}
	return fmt.Sprintf("WARNING: latest of %s %s: %s %s@%s (%s rows); the version it named is still %s@%s",
		name, what, means, name, m.To.Version, Thousands(m.To.Rows), name, m.From.Version)
}

func (p Pointed) label(name string) string {
	if p.Rows < 0 {
		return fmt.Sprintf("%s@%s (manifest missing)", name, p.Version)
	}
	return fmt.Sprintf("%s@%s (%s rows)", name, p.Version, Thousands(p.Rows))
}

// Thousands formats n with a comma every three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// CurrentLatest returns what datasets/<name>/latest names (nil when there
// is no pointer), with the rows and creation time of its manifest (Rows -1
// when that manifest is gone).
func CurrentLatest(ctx context.Context, s blob.Store, name string) (*Pointed, error) {
	var l Latest
	if err := blob.GetJSON(ctx, s, LatestKey(name), &l); err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("catalog: read latest of %s: %w", name, err)
	}
	m, err := ReadManifest(ctx, s, name, strings.TrimPrefix(l.Version, "v"))
	if errors.Is(err, ErrNoDataset) {
		return &Pointed{Version: l.Version, Rows: -1}, nil
	}
	if err != nil {
		return nil, err
	}
	p := PointedAt(m)
	return &p, nil
}
