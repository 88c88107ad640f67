// Package datasets defines what a benchmark's dataset builder provides and
// the pieces every builder shares (staging of sources, input errors, the
// builder registry). Each benchmark's builder lives in datasets/<name>.
package datasets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/pq"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/schemas"
)

// Env is what a builder may use: the object store, a way to open s3://
// sources with the deployment's S3 settings and, for builders that call
// models (see Generator), the model gateway.
type Env struct {
	Store  blob.Store
	OpenS3 source.S3Opener
	// Models is the model gateway, set only while a Generator generates
	// (bound to the unit's response cache); nil otherwise. Builders that
	// call no models never look at it.
	Models Completer
}

// Request asks for a build.
type Request struct {
	Source string            `json:"source"` // directory, http(s) URL, s3:// URL or embedded://<name>
	Params map[string]string `json:"params,omitempty"`
	// As, when set, tags the version (NAME@As names it; catalog.TagKey).
	As string `json:"as,omitempty"`
	// Task says Source is a task file (docs/tasks.md): the dataset is the
	// benchmark it defines, built by the dynamic builder.
	Task bool `json:"task,omitempty"`
}

// Part says what one data file of a version will hold. It travels through
// workflow history, so it stays small: names and hashes, never rows.
type Part struct {
	Index int    `json:"index"`
	Label string `json:"label"` // e.g. the BFCL category
	// Inputs are the sha256 of the staged source files this part reads.
	Inputs []string `json:"inputs,omitempty"`
	Start  int64    `json:"start,omitempty"` // first row, for generated data
	Rows   int64    `json:"rows"`            // expected rows
}

// Inputs are the sha256 of srcs, in order: the Inputs of a part that reads
// every source.
func Inputs(srcs []catalog.Source) []string {
	var out []string
	for _, s := range srcs {
		out = append(out, s.SHA256)
	}
	return out
}

// OnePart is the part of a version that is a single part: index 0, every
// source an input, rows rows.
func OnePart(label string, srcs []catalog.Source, rows int) Part {
	return Part{Index: 0, Label: label, Inputs: Inputs(srcs), Rows: int64(rows)}
}

// Plan is a validated build: the version id, its sources and its parts.
type Plan struct {
	Dataset        string            `json:"dataset"`
	Version        string            `json:"version"`
	BuilderVersion string            `json:"builder_version"`
	Schema         schemas.Table     `json:"schema"`
	Params         map[string]string `json:"params,omitempty"`
	// Runtime holds settings that do not change the content (so are not part
	// of the version id), e.g. a throttle.
	Runtime map[string]string `json:"runtime,omitempty"`
	Sources []catalog.Source  `json:"sources"`
	Parts   []Part            `json:"parts"`
	// Generate lists the units of model calls a Generator makes before its
	// parts can be planned (e.g. sampling candidate replies); Parts is empty
	// until Generator.Finish fills it. Empty for every other builder.
	Generate []Part `json:"generate,omitempty"`
	// Stats are counts a builder reports about what it built (e.g. items
	// a validation rejected, by reason). They are not part of the version
	// id; Publish copies them into the manifest, so the card shows them.
	Stats map[string]int64 `json:"stats,omitempty"`
	// Variant is true for a build given content parameters (any --param
	// but the builder's runtime settings): it does not move latest
	// (catalog.Manifest.Variant). Tag is the request's As. PlanBuild sets
	// both; they are not part of the version id.
	Variant bool   `json:"variant,omitempty"`
	Tag     string `json:"tag,omitempty"`
}

// IsVariant reports whether req gives plan content parameters: any
// parameter that is not one of the plan's runtime settings.
func IsVariant(req Request, plan Plan) bool {
	for k := range req.Params {
		if _, rt := plan.Runtime[k]; !rt {
			return true
		}
	}
	return false
}

// Builder builds one benchmark's dataset.
type Builder interface {
	// Name is the dataset name, e.g. "bfcl".
	Name() string
	// Version is the builder's version; changing what it writes changes it.
	Version() string
	// Schema is the table the builder writes.
	Schema() schemas.Table
	// Plan reads the sources, stages them in the store (see Stage), validates
	// every row and splits the output into parts. Bad input is reported as an
	// *InputError naming the file and line; nothing is written but staging.
	Plan(ctx context.Context, env Env, req Request) (Plan, error)
	// WritePart writes part p of the plan as one Parquet object at key,
	// calling progress with the rows written so far now and then.
	WritePart(ctx context.Context, env Env, plan Plan, p Part, key string, progress func(rows int64)) (pq.FileInfo, error)
	// Card renders the version's README dataset card.
	Card(m catalog.Manifest) string
}

// StoreCarder is a Builder whose card shows what the version keeps beside
// its data (a task file's text): the publish step renders the card with it
// instead of Card.
type StoreCarder interface {
	CardFromStore(ctx context.Context, store blob.Store, m catalog.Manifest) (string, error)
}

// NewPlan fills the common fields of a plan and derives its version id.
func NewPlan(b Builder, sources []catalog.Source, params map[string]string, parts []Part) Plan {
	return Plan{
		Dataset: b.Name(), BuilderVersion: b.Version(), Schema: b.Schema(), Params: params,
		Sources: sources, Parts: parts,
		Version: catalog.VersionID(b.Name(), b.Version(), b.Schema(), sources, params),
	}
}

// InputError is bad input: a file that does not parse, a row that breaks a
// rule. Builds stop on it without retrying.
type InputError struct {
	File string // URI of the file
	Line int    // 1-based; 0 when the error is about the whole file
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Configured is an optional capability of a Builder whose parts are the
// dataset's configs: subsets a reader loads on their own, such as BFCL's
// categories or IFEvalCode's languages. Publishing a version
// (internal/release) puts each config's files in a folder of their own and
// declares them in the dataset card. ConfigOf returns the config of a part
// from its label (catalog.File.Label). Builders without it publish one
// config, "default".
type Configured interface {
	ConfigOf(label string) string
}

// LocalizeError returns err with the file of an *InputError that names a
// file of the local source directory src by its relative name (as staged
// sources of a local directory are named, see source.PublicURI) rewritten
// to its full path, so the user's message points at the file. Other
// errors, and sources that are not local directories, are returned as
// they are.
func LocalizeError(err error, src string) error {
	var ie *InputError
	if src == "" || strings.Contains(src, "://") || !errors.As(err, &ie) || ie.File == "" || filepath.IsAbs(ie.File) || strings.Contains(ie.File, "://") {
		return err
	}
	abs, aerr := filepath.Abs(src)
	if aerr != nil {
		return err
	}
	full := filepath.Join(abs, filepath.FromSlash(ie.File))
	if _, serr := os.Stat(full); serr != nil {
		return err
	}
	return &InputError{File: full, Line: ie.Line, Msg: ie.Msg}
}

// CheckNotEmpty returns an *InputError naming the source src when plan
// holds no rows: a source that yields nothing (an empty file, files whose
// lines are all blank) must not become a version. A plan whose rows come
// from generation units (Plan.Generate) is checked after they ran, by
// Generator.Finish's plan.
func CheckNotEmpty(plan Plan, src string) error {
	if len(plan.Generate) > 0 {
		return nil
	}
	var rows int64
	for _, p := range plan.Parts {
		rows += p.Rows
	}
	if rows > 0 {
		return nil
	}
	if src == "" {
		src = "embedded://" + plan.Dataset
	}
	var files []string
	for _, s := range plan.Sources {
		files = append(files, fmt.Sprintf("%s (%d bytes)", s.Name, s.Bytes))
	}
	msg := "the source yields no rows; nothing was built"
	if len(files) > 0 {
		msg += " (read " + strings.Join(files, ", ") + ")"
	}
	var skipped []string
	for k, n := range plan.Stats {
		if strings.HasPrefix(k, "skipped") {
			skipped = append(skipped, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(skipped) > 0 {
		sort.Strings(skipped)
		msg += "; every row was skipped: " + strings.Join(skipped, ", ")
	}
	return &InputError{File: src, Msg: msg}
}
