package taskfile

import (
	"fmt"
	"sync"

	"gopkg.in/yaml.v3"
)

// ScoreFunc scores a row's replies together, one per repeat
// (generation.repeats; a list of one without): the score and why. A
// registered scorer sees all of a sample's replies, as lm-eval's filters
// (majority_vote) do, and the sample's score is its score of the list.
type ScoreFunc func(replies []Reply, r Row) (float64, string)

// NewScoreFunc compiles a registered scorer type's parameters.
type NewScoreFunc func(params yaml.Node, spec *Spec) (ScoreFunc, error)

var (
	externMu sync.RWMutex
	extern   = map[string]NewScoreFunc{}
)

// RegisterScorer adds a scorer type defined outside this package
// (scorers/lmeval's filter pipelines), so that this package links no
// other benchmark's. It panics on a name taken, as registering twice is
// a programming error.
func RegisterScorer(typ string, f NewScoreFunc) {
	externMu.Lock()
	defer externMu.Unlock()
	if _, ok := extern[typ]; ok {
		panic(fmt.Sprintf("taskfile: scorer type %q registered twice", typ))
	}
	extern[typ] = f
}

func externScorer(typ string) (NewScoreFunc, bool) {
	externMu.RLock()
	defer externMu.RUnlock()
	f, ok := extern[typ]
	return f, ok
}

type funcScorer ScoreFunc

func (f funcScorer) score(reply Reply, r Row) (float64, string) { return f([]Reply{reply}, r) }

func (f funcScorer) scoreList(replies []Reply, r Row) (float64, string) { return f(replies, r) }

// CompileTemplate compiles a Jinja template under the task file's rules
// (bounds, no file or network access).
func CompileTemplate(src string) (*Template, error) { return compileTemplate(src) }

// Render renders t over a row's columns.
func (t *Template) Render(fields map[string]any) (string, error) {
	return t.render(vars(Row{Fields: fields}))
}
