package reporteval

import (
	"context"
	"errors"
	"strconv"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
)

// JudgeRecord is one judge's answer to one question: the audit record of
// the call (judge, prompt version, raw reply, parsed reply, parse error).
type JudgeRecord struct {
	Verdict judge.Verdict `json:"verdict"`
	// CallError is set when the call itself was refused for this request
	// (bad request, context too long, content filter): a judge error, like
	// a reply that does not parse.
	CallError string `json:"call_error,omitempty"`
}

// Failed reports whether the record is a judge error.
func (r JudgeRecord) Failed() bool { return r.CallError != "" || r.Verdict.Failed() }

// question is one prompt to put to a judge or a panel, with the reply
// the task's oracle gives to it.
type question struct {
	version string
	msgs    []openai.ChatCompletionMessage
	schema  *judge.Schema
	oracle  string
}

// asker asks the judges of one sample; it is safe for concurrent use.
type asker struct {
	models  judge.Completer
	seed    *int
	noCache bool

	mu      sync.Mutex
	usage   modelapi.Totals
	answers int // judge answers received (one per judge and question)
	errors  int // of which judge errors
	// deferred holds the answers a batch run's pass deferred: the
	// judging goes on without them (judge.Deferred).
	deferred judge.Deferred
}

// judgeParams are the sampling parameters of every judge call: greedy,
// so that a run's verdicts are as repeatable as the judge allows.
func judgeParams() modelapi.Params {
	zero := float32(0)
	return modelapi.Params{Temperature: &zero}
}

// ask asks one judge q and decodes the reply into v. A call refused for
// this request is recorded (CallError) and reported as ok false, like a
// reply that does not parse; so is an answer deferred to a batch, which
// a.deferred keeps for Evaluate to return (not counted as an answer).
// Other call failures are returned.
func (a *asker) ask(ctx context.Context, model string, q question, v any) (JudgeRecord, bool, error) {
	verdict, err := judge.Ask(ctx, a.models, judge.Request{
		Judge: model, PromptVersion: q.version, Messages: q.msgs, Schema: q.schema,
		Params: judgeParams(), Seed: a.seed, NoCache: a.noCache, Oracle: q.oracle,
	}, v)
	rec := JudgeRecord{Verdict: verdict}
	if a.deferred.Keep(err) {
		return rec, false, nil
	}
	if err != nil && !errors.Is(err, modelapi.ErrModelFailure) {
		a.mu.Lock()
		a.usage.Merge(verdict.Usage)
		a.mu.Unlock()
		return rec, false, err
	}
	if err != nil {
		rec.CallError = err.Error()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage.Merge(verdict.Usage)
	a.answers++
	if rec.Failed() {
		a.errors++
	}
	return rec, !rec.Failed(), nil
}

// askPanel asks every judge of a panel q and returns the records and the
// decoded replies, in the panel's order (nil for a judge error).
func askPanel[R any](ctx context.Context, a *asker, judges []string, q question) ([]JudgeRecord, []*R, error) {
	recs := make([]JudgeRecord, len(judges))
	replies := make([]*R, len(judges))
	for i, model := range judges {
		r := new(R)
		rec, ok, err := a.ask(ctx, model, q, r)
		if err != nil {
			return recs, replies, err
		}
		recs[i] = rec
		if ok {
			replies[i] = r
		}
	}
	return recs, replies, nil
}

// PanelMean is the panel's value of a score: the mean of the judges'
// values, judge errors (nil) left out; ok is false when every judge
// failed. The mean, not a vote, because the scores are on an interval
// scale and the original averages them too (over pairs).
func PanelMean(values []*float64) (mean float64, ok bool) {
	n := 0
	for _, v := range values {
		if v != nil {
			mean += *v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return mean / float64(n), true
}

// scoreLabels writes values as panel labels ("" for a judge error).
func scoreLabels(values []*float64) []string {
	out := make([]string, len(values))
	for i, v := range values {
		if v != nil {
			out[i] = strconv.FormatFloat(*v, 'g', -1, 64)
		}
	}
	return out
}

// forEach calls fn(i) for i in [0, n), at most limit at a time, and
// returns the first error (the others then see a cancelled context).
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// The caller's context ended before every item started.
		return context.Cause(ctx)
	}
	return first
}
