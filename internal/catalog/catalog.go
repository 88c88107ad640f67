// Package catalog lays out dataset versions in the object store and reads
// them back.
//
// A version lives at datasets/<name>/v<version>/ with data/part-NNNNN.parquet,
// a README.md dataset card and manifest.json. The version id is the hash of
// everything that determines the content (builder name and version, schema,
// sources' sha256, parameters), so building the same sources twice names the
// same version. Publishing writes data, then the card, then the manifest, then
// datasets/<name>/latest: readers trust only a manifest, so they never see
// half a version.
package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/names"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/schemas"
)

// ErrNoDataset is returned when a dataset or version is not in the store.
var ErrNoDataset = errors.New("catalog: no such dataset version")

// ErrMismatch is returned (wrapped) by Verify, VerifyFiles and VerifyHashes
// when a version's files do not match its manifest: a file is missing or
// has another size, row count or sha256, the rows do not add up, or a file
// is not Parquet. The message names the version and the file. A store that
// fails for another reason is not a mismatch. Readers of a version through
// Checked report the same kind of failure as pq.ErrCorrupt (VerifyFiles
// wraps both).
var ErrMismatch = errors.New("catalog: files do not match the manifest")

// Source is one input file of a build, fixed by its content hash.
type Source struct {
	Name   string `json:"name"` // path relative to the build's source location
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// File is one data file of a version.
type File struct {
	Path   string `json:"path"` // relative to the version directory
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Label is the builder's label of the part (datasets.Part.Label, e.g.
	// the BFCL category); publishing groups parts into configs by it (see
	// datasets.Configured). Empty in manifests written before it existed.
	Label string `json:"label,omitempty"`
}

// Manifest fixes a dataset version.
type Manifest struct {
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	Schema         schemas.Table     `json:"schema"`
	BuilderVersion string            `json:"builder_version"`
	Params         map[string]string `json:"params,omitempty"`
	Sources        []Source          `json:"sources"`
	Files          []File            `json:"files"`
	Rows           int64             `json:"rows"`
	CreatedAt      time.Time         `json:"created_at"`
	// Stats are the builder's counts about the build (datasets.Plan.Stats),
	// e.g. items a validation rejected; not part of the version id.
	Stats map[string]int64 `json:"stats,omitempty"`
	// Variant is true for a version built with parameters (a build given
	// --param): publishing it does not move latest, so plain NAME keeps
	// naming the benchmark's default build. It is reached by its version
	// or by the tag its build gave it (--as). Not part of the version id.
	Variant bool `json:"variant,omitempty"`
}

// Latest is the content of datasets/<name>/latest.
type Latest struct {
	Version string `json:"version"`
}

// VersionID derives a version id from what determines a version's content.
// Sources are identified by relative name and content hash (not URI), so the
// same files fetched from a directory or a URL give the same version.
func VersionID(name, builderVersion string, schema schemas.Table, sources []Source, params map[string]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "dataset=%s\nbuilder=%s\nschema=%s/%d\n", name, builderVersion, schema.Name, schema.Version)
	shas := make([]string, 0, len(sources))
	for _, s := range sources {
		shas = append(shas, s.Name+"="+s.SHA256)
	}
	sort.Strings(shas)
	for _, s := range shas {
		fmt.Fprintf(h, "source=%s\n", s)
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "param=%s=%s\n", k, params[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Dir returns the key prefix of a version, ending in "/".
func Dir(name, version string) string { return fmt.Sprintf("datasets/%s/v%s/", name, version) }

// PartPath returns the path of part i relative to the version directory.
func PartPath(i int) string { return fmt.Sprintf("data/part-%05d.parquet", i) }

// PartKey returns the object key of part i of a version.
func PartKey(name, version string, i int) string { return Dir(name, version) + PartPath(i) }

// ManifestKey returns the object key of a version's manifest.
func ManifestKey(name, version string) string { return Dir(name, version) + "manifest.json" }

// CardKey returns the object key of a version's dataset card.
func CardKey(name, version string) string { return Dir(name, version) + "README.md" }

// LatestKey returns the object key of a dataset's latest pointer.
func LatestKey(name string) string { return fmt.Sprintf("datasets/%s/latest", name) }

// ReadManifest reads a version's manifest.
func ReadManifest(ctx context.Context, s blob.Store, name, version string) (Manifest, error) {
	var m Manifest
	if err := blob.GetJSON(ctx, s, ManifestKey(name, version), &m); err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return m, fmt.Errorf("catalog: %s@%s: %w", name, version, ErrNoDataset)
		}
		return m, fmt.Errorf("catalog: read manifest of %s@%s: %w", name, version, err)
	}
	return m, nil
}

// Resolve turns "name", "name@latest", "name@<version>" or "name@<tag>"
// (a tag a build gave with --as, see Publish) into a manifest. The
// reference is checked first (names.ParseRef): a malformed one is an
// error wrapping names.ErrInvalid, and nothing is read.
func Resolve(ctx context.Context, s blob.Store, ref string) (Manifest, error) {
	name, version, err := names.ParseRef(ref)
	if err != nil {
		return Manifest{}, fmt.Errorf("catalog: %w", err)
	}
	if version == "" || version == "latest" {
		var l Latest
		if err := blob.GetJSON(ctx, s, LatestKey(name), &l); err != nil {
			if errors.Is(err, blob.ErrNotFound) {
				return Manifest{}, fmt.Errorf("catalog: %s has no published version with its default parameters (a build with --param does not move latest: name it %s@VERSION or %s@TAG): %w", name, name, name, ErrNoDataset)
			}
			return Manifest{}, fmt.Errorf("catalog: read latest of %s: %w", name, err)
		}
		version = l.Version
	} else if ValidTag(version) == nil {
		var l Latest
		err := blob.GetJSON(ctx, s, TagKey(name, version), &l)
		switch {
		case err == nil:
			version = l.Version
		case !errors.Is(err, blob.ErrNotFound):
			return Manifest{}, fmt.Errorf("catalog: read tag %s of %s: %w", version, name, err)
		}
	}
	return ReadManifest(ctx, s, name, strings.TrimPrefix(version, "v"))
}

// TagKey returns the object key of a dataset's tag: a name a build gave
// its version (--as), holding a Latest.
func TagKey(name, tag string) string { return fmt.Sprintf("datasets/%s/tags/%s", name, tag) }

var tagRE = regexp.MustCompile(`^[a-z][a-z0-9._-]{0,62}$`)

// ValidTag checks a tag: a lower-case letter, then up to 62 letters,
// digits, '.', '_' or '-'; not "latest", and not a version id's shape
// (16 hex digits), so NAME@TAG never hides a version.
func ValidTag(tag string) error {
	if !tagRE.MatchString(tag) || tag == "latest" || versionRE.MatchString(tag) {
		return fmt.Errorf("catalog: tag %q: want a lower-case letter then letters, digits, '.', '_' or '-' (not latest, not a version id)", tag)
	}
	return nil
}

var versionRE = regexp.MustCompile(`^v?[0-9a-f]{16}$`)

// PublishOptions say which pointers a publish moves.
type PublishOptions struct {
	// Tag, when set, points datasets/<name>/tags/<Tag> at the version.
	Tag string
}

// Publish writes a version's card, then its manifest, then the latest
// pointer (unless the version is a Variant), then its tag (opts.Tag). Data
// files must already be written.
func Publish(ctx context.Context, s blob.Store, m Manifest, card string, opts PublishOptions) error {
	_, err := PublishMove(ctx, s, m, card, opts)
	return err
}

// PublishMove is Publish, and says what latest named before and after
// (the zero LatestMove for a variant).
func PublishMove(ctx context.Context, s blob.Store, m Manifest, card string, opts PublishOptions) (LatestMove, error) {
	if opts.Tag != "" {
		if err := ValidTag(opts.Tag); err != nil {
			return LatestMove{}, err
		}
	}
	if err := blob.PutBytes(ctx, s, CardKey(m.Name, m.Version), []byte(card)); err != nil {
		return LatestMove{}, fmt.Errorf("catalog: write card: %w", err)
	}
	if err := blob.PutJSON(ctx, s, ManifestKey(m.Name, m.Version), m); err != nil {
		return LatestMove{}, fmt.Errorf("catalog: write manifest: %w", err)
	}
	return PointMove(ctx, s, m, !m.Variant, opts.Tag)
}

// Point moves the pointers of a version already published: latest, when
// latest is true, and tag, when set. Publishing the same build again
// (a reused version) calls it, so --as tags a version built before.
func Point(ctx context.Context, s blob.Store, m Manifest, latest bool, tag string) error {
	_, err := PointMove(ctx, s, m, latest, tag)
	return err
}

// PointMove is Point, and says what latest named before and after (the
// zero LatestMove when latest is false). latest is written even when it
// already names m, so a pointer a failed publish left behind is repaired.
func PointMove(ctx context.Context, s blob.Store, m Manifest, latest bool, tag string) (LatestMove, error) {
	var mv LatestMove
	if latest {
		from, err := CurrentLatest(ctx, s, m.Name)
		if err != nil {
			return mv, err
		}
		if err := blob.PutJSON(ctx, s, LatestKey(m.Name), Latest{Version: m.Version}); err != nil {
			return mv, fmt.Errorf("catalog: write latest pointer: %w", err)
		}
		to := PointedAt(m)
		mv = LatestMove{From: from, To: &to}
	}
	if tag != "" {
		if err := ValidTag(tag); err != nil {
			return mv, err
		}
		if err := blob.PutJSON(ctx, s, TagKey(m.Name, tag), Latest{Version: m.Version}); err != nil {
			return mv, fmt.Errorf("catalog: write tag %s: %w", tag, err)
		}
	}
	return mv, nil
}

// Verify checks that every file a manifest names exists with the recorded
// size. (Hashes are checked by readers that stream the files; see VerifyHashes.)
func Verify(ctx context.Context, s blob.Store, m Manifest) error {
	var rows int64
	for _, f := range m.Files {
		key := Dir(m.Name, m.Version) + f.Path
		info, err := s.Head(ctx, key)
		switch {
		case errors.Is(err, blob.ErrNotFound):
			return fmt.Errorf("%w: %s@%s: file %s is missing (%w)", ErrMismatch, m.Name, m.Version, f.Path, err)
		case err != nil:
			return fmt.Errorf("catalog: %s@%s: file %s named in manifest: %w", m.Name, m.Version, f.Path, err)
		case info.Size != f.Bytes:
			return fmt.Errorf("%w: %s@%s: file %s is %d bytes, manifest says %d", ErrMismatch, m.Name, m.Version, f.Path, info.Size, f.Bytes)
		}
		rows += f.Rows
	}
	if rows != m.Rows {
		return fmt.Errorf("%w: %s@%s: files hold %d rows, manifest says %d", ErrMismatch, m.Name, m.Version, rows, m.Rows)
	}
	return nil
}

// Checked returns store with the promises m makes about its files (see
// pq.Expecting): every reader of internal/pq that opens one of m's files
// through it checks the file's size, row count and Parquet footer, and its
// sha256 when it fetches the file whole, before using a row; a file that
// breaks a promise is an error wrapping pq.ErrCorrupt naming its key. When
// schemas knows the manifest's table, a file must also have exactly that
// table's top-level columns (schemas.Columns); the error names the missing
// and the extra ones. The
// activities read dataset versions through it, so data is checked where it
// is read. Other objects read through it are not checked.
func Checked(store blob.Store, m Manifest) blob.Store {
	files := make(map[string]pq.Expect, len(m.Files))
	cols, _ := schemas.Columns(m.Schema) // nil (unchecked) for a table schemas does not know
	for _, f := range m.Files {
		files[Dir(m.Name, m.Version)+f.Path] = pq.Expect{Rows: f.Rows, Bytes: f.Bytes, SHA256: f.SHA256, Columns: cols}
	}
	return pq.Expecting(store, files)
}

// VerifyFiles is Verify, then opens every file of m through Checked as its
// readers will (its footer and row count, and its sha256 when the file is
// small enough to be fetched whole), so that a version whose files were
// overwritten with other bytes of the same size fails before any of it is
// used. A file that breaks a promise is an error wrapping ErrMismatch and
// pq.ErrCorrupt, naming the version and the file.
func VerifyFiles(ctx context.Context, s blob.Store, m Manifest) error {
	if err := Verify(ctx, s, m); err != nil {
		return err
	}
	checked := Checked(s, m)
	for _, f := range m.Files {
		err := pq.Check(ctx, checked, Dir(m.Name, m.Version)+f.Path)
		switch {
		case errors.Is(err, pq.ErrCorrupt):
			return fmt.Errorf("%w: %s@%s: file %s: %w", ErrMismatch, m.Name, m.Version, f.Path, err)
		case err != nil:
			return fmt.Errorf("catalog: %s@%s: file %s: %w", m.Name, m.Version, f.Path, err)
		}
	}
	return nil
}

// VerifyHashes streams every file of m and checks its sha256.
func VerifyHashes(ctx context.Context, s blob.Store, m Manifest) error {
	for _, f := range m.Files {
		key := Dir(m.Name, m.Version) + f.Path
		rc, err := s.Get(ctx, key)
		switch {
		case errors.Is(err, blob.ErrNotFound):
			return fmt.Errorf("%w: %s@%s: file %s is missing (%w)", ErrMismatch, m.Name, m.Version, f.Path, err)
		case err != nil:
			return fmt.Errorf("catalog: %s@%s: %w", m.Name, m.Version, err)
		}
		sum, err := sha256Reader(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("catalog: %s@%s: read %s: %w", m.Name, m.Version, f.Path, err)
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%w: %s@%s: file %s has sha256 %s, manifest says %s", ErrMismatch, m.Name, m.Version, f.Path, sum, f.SHA256)
		}
	}
	return nil
}

// Entry is one published version in a listing.
type Entry struct {
	Name      string    `json:"name"`
	Version   string    `json:"version"`
	Rows      int64     `json:"rows"`
	Files     int       `json:"files"`
	Latest    bool      `json:"latest"`
	Variant   bool      `json:"variant,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// List returns every published version (those with a manifest), sorted by
// name then creation time.
func List(ctx context.Context, s blob.Store) ([]Entry, error) {
	infos, err := s.List(ctx, "datasets/")
	if err != nil {
		return nil, fmt.Errorf("catalog: list: %w", err)
	}
	latest := map[string]string{}
	tags := map[string][]string{} // name@version -> tags
	var out []Entry
	for _, info := range infos {
		parts := strings.Split(info.Key, "/")
		switch {
		case len(parts) == 3 && parts[2] == "latest":
			var l Latest
			if err := blob.GetJSON(ctx, s, info.Key, &l); err == nil {
				latest[parts[1]] = l.Version
			}
		case len(parts) == 4 && parts[2] == "tags":
			var l Latest
			if err := blob.GetJSON(ctx, s, info.Key, &l); err == nil {
				tags[parts[1]+"@"+l.Version] = append(tags[parts[1]+"@"+l.Version], parts[3])
			}
		case len(parts) == 4 && parts[3] == "manifest.json" && strings.HasPrefix(parts[2], "v"):
			m, err := ReadManifest(ctx, s, parts[1], strings.TrimPrefix(parts[2], "v"))
			if err != nil {
				return nil, err
			}
			out = append(out, Entry{Name: m.Name, Version: m.Version, Rows: m.Rows, Files: len(m.Files), Variant: m.Variant, CreatedAt: m.CreatedAt})
		}
	}
	for i := range out {
		out[i].Latest = latest[out[i].Name] == out[i].Version
		out[i].Tags = tags[out[i].Name+"@"+out[i].Version]
		sort.Strings(out[i].Tags)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].CreatedAt.Before(out[j].CreatedAt)
	})
	return out, nil
}
