// Package benchmark defines what one benchmark registers: a single value
// carrying everything the rest of benchline needs to know about it (its
// dataset builder, its evaluation task, what the demo runs, its
// deterministic line scorers). Each benchmark declares its value in
// datasets/<name>/benchmark.go; internal/registry lists them, and nothing
// else names a benchmark.
package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/internal/webfetch"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// A Benchmark is one registered benchmark.
type Benchmark struct {
	// Builder builds the benchmark's dataset; its Name is the benchmark's
	// name.
	Builder datasets.Builder
	// Description is one line for --help and the leaderboard.
	Description string
	// NewTask returns the evaluation task given what the worker provides;
	// nil for a dataset that is built but not evaluated (training pairs, a
	// synthetic load).
	NewTask func(Deps) scorers.Task
	// Demo says what `benchline demo` and the end-to-end tests run; nil
	// leaves the benchmark out of both.
	Demo *Demo
	// Scorers are deterministic line scorers, each a `benchline score
	// <name>` subcommand.
	Scorers []LineScorer
	// Cluster, when set, maps a result row to the cluster its sample
	// shares with others (e.g. a character's dialogues): summaries and
	// leaderboard comparisons then resample and compute standard errors
	// by cluster (docs/statistics.md). An empty key makes the sample a
	// cluster of its own. nil: every sample is independent. It is called
	// from several goroutines at once (shards are read in parallel), so it
	// must be a pure function of the row.
	Cluster func(schemas.ResultRow) string
	// ClusterBy says in a few words what Cluster groups by, for the
	// leaderboard (e.g. "character"); set exactly when Cluster is.
	ClusterBy string
}

// Name is the benchmark's (and its dataset's) name.
func (b Benchmark) Name() string { return b.Builder.Name() }

// Deps are what tasks may need from the worker that runs them. A field is
// nil on workers that do not provide it (a task then fails the samples
// that need it as infrastructure errors, never as wrong answers).
type Deps struct {
	// Sandbox runs untrusted code; set on workers of the sandbox queue.
	Sandbox lang.Sandboxer
	// Store is the object store, for tasks that read inputs of a run
	// beyond the dataset (omnicloze's captions files).
	Store blob.Store
	// Web fetches cited web pages (bounded, cached in the object store);
	// set on workers of the main queue.
	Web *webfetch.Fetcher
}

// Demo is what the demo builds and evaluates for a benchmark: the dataset
// from the fixtures embedded in the binary (embedded://<name>), with
// Params, then each of Models.
type Demo struct {
	Params map[string]string
	// Models are the baseline models evaluated; none for a dataset that is
	// built but not evaluated.
	Models []string
	// Judges are the judge models of every evaluation, by role, as
	// runs.Request.Judges (a panel is several models for one role, comma
	// separated; see judge.Panel).
	Judges map[string]string
	// Note, when set, is printed before the build (e.g. that candidates
	// are sampled live from baseline models).
	Note string
	// Hosts are the web hosts the fixtures cite (e.g. ReportEval's
	// sources.benchline.test), each with the handler that serves it: the
	// embedded stack serves them on a local listener and its workers'
	// fetcher resolves each host there, so the demo and the end-to-end
	// tests fetch them offline.
	Hosts map[string]http.Handler
	// Describe, when set, prints what is worth seeing of the built version
	// (e.g. where a preference dataset's pairs come from).
	Describe func(ctx context.Context, env DescribeEnv, m catalog.Manifest) error
}

// DescribeEnv is what Demo.Describe may use.
type DescribeEnv struct {
	Store blob.Store
	Out   io.Writer
	// Label names a model for people, marking baselines as such.
	Label func(model string) string
}

// A LineScorer is a deterministic scorer over JSON lines: `benchline score
// <Name>` reads one input per line and writes one JSON line per input, in
// order.
type LineScorer struct {
	Name  string
	Short string
	Long  string
	// Sandboxed scorers run programs: the command opens a sandbox and
	// offers --concurrency and --attempts.
	Sandboxed bool
	Score     func(ctx context.Context, env ScoreEnv, in io.Reader, out io.Writer) error
}

// ScoreEnv is what a LineScorer may use.
type ScoreEnv struct {
	// Sandbox is set for Sandboxed scorers.
	Sandbox lang.Sandboxer
	// Concurrency is inputs scored at a time; Attempts is tries per input
	// on sandbox errors.
	Concurrency, Attempts int
}

// ErrInvalid marks a registration that breaks a rule below.
var ErrInvalid = errors.New("benchmark: invalid registration")

var scorerName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Validate checks a registration: a builder with a name, a description, a
// task for the same dataset, demo models only where there is a task, a
// cluster function only with its description, and well-formed line
// scorers.
func (b Benchmark) Validate() error {
	if b.Builder == nil || b.Builder.Name() == "" {
		return fmt.Errorf("%w: no builder", ErrInvalid)
	}
	name := b.Builder.Name()
	if b.Description == "" {
		return fmt.Errorf("%w: %s: no description", ErrInvalid, name)
	}
	if b.NewTask != nil {
		if t := b.NewTask(Deps{}); t == nil || t.Dataset() != name {
			return fmt.Errorf("%w: %s: task evaluates dataset %q", ErrInvalid, name, datasetOf(t))
		}
	}
	if b.Demo != nil && len(b.Demo.Models) > 0 && b.NewTask == nil {
		return fmt.Errorf("%w: %s: demo models but no task", ErrInvalid, name)
	}
	if (b.Cluster == nil) != (b.ClusterBy == "") {
		return fmt.Errorf("%w: %s: Cluster and ClusterBy go together (a cluster function needs its description)", ErrInvalid, name)
	}
	for _, s := range b.Scorers {
		if !scorerName.MatchString(s.Name) || s.Score == nil || s.Short == "" {
			return fmt.Errorf("%w: %s: line scorer %q needs a lower-case name, a Short help line and a Score func", ErrInvalid, name, s.Name)
		}
	}
	return nil
}

func datasetOf(t scorers.Task) string {
	if t == nil {
		return ""
	}
	return t.Dataset()
}
