package taskfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
)

// EngineVersion is the version of the task-file engine: how a built row is
// asked and scored. It is part of every task file's run id; bump it when
// a scorer of the library changes what it returns (taskfile-2: a reply's
// tool calls are shown in its result row's response, and a row's whole
// numbers reach templates as ints, as at build time, not as floats).
const EngineVersion = "taskfile-2"

// TaskRowTable is the table a task file's dataset is built into: each row
// holds its prompt as rendered at build time, so evaluating a row renders
// nothing and the dataset shows exactly what a model is asked.
var TaskRowTable = Declare()

// Declare declares TaskRowTable (a function so that the name is written
// once).
func Declare() schemas.Table { return schemas.Declare[TaskRow]("taskfile_row", 1) }

// TaskRow is one built row of a task file's dataset.
type TaskRow struct {
	ID       string `parquet:"id" json:"id"`
	Category string `parquet:"category,dict" json:"category"`
	Target   string `parquet:"target" json:"target"`
	Cluster  string `parquet:"cluster,dict" json:"cluster,omitempty"`
	// MessagesJSON is the rendered chat ([{"role", "content"}]).
	MessagesJSON string `parquet:"messages_json" json:"messages_json"`
	// ToolsJSON is the function definitions offered, as OpenAI tools; empty
	// when none.
	ToolsJSON string `parquet:"tools_json" json:"tools_json,omitempty"`
	// FieldsJSON is the source row's columns, for scorers whose
	// parameters are templates over them.
	FieldsJSON string `parquet:"fields_json" json:"fields_json"`
}

// Task evaluates one task file's dataset: it asks each row's rendered
// prompt and scores the reply with the task file's scorers.
type Task struct {
	c *Compiled
}

var (
	_ scorers.Task              = (*Task)(nil)
	_ scorers.ReferenceProvider = (*Task)(nil)
)

// NewTask is the evaluation task of a compiled task file.
func NewTask(c *Compiled) *Task { return &Task{c: c} }

// Compiled is the task file the task scores with.
func (t *Task) Compiled() *Compiled { return t.c }

func (t *Task) Dataset() string   { return t.c.Spec.Name }
func (t *Task) Version() string   { return EngineVersion }
func (t *Task) Metrics() []string { return t.c.Metrics() }

// sample is a row as Evaluate uses it.
type sample struct {
	row      TaskRow
	messages []openai.ChatCompletionMessage
	tools    []openai.Tool
	fields   map[string]any
}

// ReadSamples implements scorers.Task.
func (t *Task) ReadSamples(ctx context.Context, store blob.Store, key string, start, n int64, fn func(scorers.Sample) error) error {
	return scorers.ReadRows(ctx, store, key, start, n,
		func(r *TaskRow) string { return r.ID }, func(r *TaskRow) string { return r.Category },
		func(s scorers.Sample) error {
			r := s.Row.(*TaskRow)
			d, err := decodeRow(r)
			if err != nil {
				return fmt.Errorf("taskfile: %s: sample %s: %w: %v", key, r.ID, scorers.ErrBadSample, err)
			}
			s.Row = d
			return fn(s)
		})
}

func decodeRow(r *TaskRow) (*sample, error) {
	s := &sample{row: *r}
	if err := json.Unmarshal([]byte(r.MessagesJSON), &s.messages); err != nil || len(s.messages) == 0 {
		return nil, fmt.Errorf("messages_json is not a list of messages: %v", err)
	}
	if r.ToolsJSON != "" {
		if err := json.Unmarshal([]byte(r.ToolsJSON), &s.tools); err != nil {
			return nil, fmt.Errorf("tools_json: %v", err)
		}
	}
	var err error
	if s.fields, err = decodeFields(r.FieldsJSON); err != nil {
		return nil, fmt.Errorf("fields_json: %v", err)
	}
	return s, nil
}

// Details are what a result row keeps of a task-file sample.
type Details struct {
	// Verdicts are the sample's: with repeats, each the mean over the
	// replies.
	Verdicts []Verdict `json:"verdicts"`
	// Replies are every reply of a row asked several times
	// (generation.repeats) with its own verdicts; empty with one.
	Replies []ReplyVerdicts `json:"replies,omitempty"`
	Cluster string          `json:"cluster,omitempty"`
	// Judges is the judge panel of a task with judged scorers;
	// Judgements every judged scorer's calls (prompt version, reply,
	// parsed verdict) and labels; Ratings the panel's labels for the
	// run's agreement (judge.RatingsKey).
	Judges     []string        `json:"judges,omitempty"`
	Judgements []Judgement     `json:"judgements,omitempty"`
	Ratings    []judge.Ratings `json:"panel_ratings,omitempty"`
}

// Evaluate asks the row's prompt with the task file's generation settings
// (the run's own, where given, win), generation.repeats times (distinct
// requests by their sample index, so each is answered and cached on its
// own), and scores the replies; a task with a code scorer leaves scoring
// to SandboxTask.Score. In batch mode every repeat is asked before a
// deferred one is returned, so all go in the same batch.
func (t *Task) Evaluate(ctx context.Context, env scorers.Env, s scorers.Sample) (scorers.Outcome, error) {
	d, ok := s.Row.(*sample)
	if !ok {
		return scorers.Outcome{}, fmt.Errorf("taskfile: sample %s: %w: row is %T", s.ID, scorers.ErrBadSample, s.Row)
	}
	env.Params = t.params(env.Params)
	out := scorers.Outcome{PromptHash: scorers.PromptHash(d.row.MessagesJSON)}
	n := t.c.Spec.Generation.N()
	resps := make([]modelapi.Response, 0, n)
	var deferred error
	for i := range n {
		req := env.Request(d.messages, d.tools)
		req.SampleIndex = i
		resp, err := env.Models.Complete(ctx, req)
		if errors.Is(err, modelapi.ErrDeferred) {
			deferred = err
			continue
		}
		if err != nil {
			return out, err
		}
		out.Usage.Add(resp.Usage)
		resps = append(resps, resp)
	}
	if deferred != nil {
		return scorers.Outcome{}, deferred
	}
	out.Response = Shown(resps[0])
	if t.c.HasSandbox() {
		// SandboxTask.Score scores the replies on the sandbox queue.
		dt := Details{Cluster: d.row.Cluster}
		if n > 1 {
			for _, r := range resps {
				dt.Replies = append(dt.Replies, ReplyVerdicts{Response: r.Text()})
			}
		}
		out.Details = dt
		return out, nil
	}
	if t.c.Judged() {
		// Compile refuses repeats with judged scorers: one reply.
		j, err := t.c.ScoreJudged(ctx, env, d.messages, t.Row(d), t.c.ReplyOf(resps[0]))
		if err != nil {
			// A batch round's deferred judge answers come with the next one.
			return out, fmt.Errorf("taskfile: sample %s: %w", s.ID, err)
		}
		out.Usage.Merge(j.Usage)
		out.Metrics = j.Metrics
		out.Details = Details{Verdicts: j.Verdicts, Cluster: d.row.Cluster, Judges: j.Panel, Judgements: j.Judgements, Ratings: j.Ratings}
		return out, nil
	}
	replies := make([]Reply, len(resps))
	for i, r := range resps {
		replies[i] = t.c.ReplyOf(r)
	}
	metrics, verdicts, each := t.c.ScoreReplies(t.Row(d), replies)
	out.Metrics = metrics
	out.Details = t.details(verdicts, each, resps, d)
	return out, nil
}

// details are the result row's details of a scored sample.
func (t *Task) details(verdicts []Verdict, each [][]Verdict, shown []modelapi.Response, d *sample) Details {
	dt := Details{Verdicts: verdicts, Cluster: d.row.Cluster}
	if len(each) > 1 {
		dt.Replies = make([]ReplyVerdicts, len(each))
		for i := range each {
			dt.Replies[i] = ReplyVerdicts{Response: Shown(shown[i]), Verdicts: each[i]}
		}
	}
	return dt
}

// Row is the scorers' view of a built row.
func (t *Task) Row(d *sample) Row {
	return Row{ID: d.row.ID, Category: d.row.Category, Target: d.row.Target, Cluster: d.row.Cluster, Fields: d.fields}
}

// params are the run's generation settings over the task file's.
func (t *Task) params(p modelapi.Params) modelapi.Params {
	g := t.c.Spec.Generation
	if p.Temperature == nil && g.Temperature != nil {
		v := float32(*g.Temperature)
		p.Temperature = &v
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = g.MaxTokens
	}
	if p.TopP == 0 && g.TopP != nil {
		p.TopP = float32(*g.TopP)
	}
	if len(p.Stop) == 0 {
		p.Stop = g.Stop
	}
	return p
}

// Reference is what baseline/reference answers a row, asked with its
// prompt: its target or, for a task with a tool_calls scorer, the expected
// calls with their first acceptable values (keyed by the tools offered
// too); for a row that expects no call, its target or a sentence. A row
// with neither has none.
func (t *Task) Reference(s scorers.Sample) (scorers.Reference, bool) {
	d, ok := s.Row.(*sample)
	if !ok {
		return scorers.Reference{}, false
	}
	ref := scorers.Reference{Messages: d.messages, Content: d.row.Target}
	tc := t.c.toolCalls()
	if tc == nil || len(d.tools) == 0 {
		// A row without a target (no target column) has no reference:
		// an empty one would make the baseline server refuse the run's
		// whole references file.
		return ref, ref.Content != ""
	}
	ref.ToolsHash = refkey.ToolsHash(d.tools)
	offered := make([]string, 0, len(d.tools))
	for _, tool := range d.tools {
		if tool.Function != nil {
			offered = append(offered, tool.Function.Name)
		}
	}
	calls, has, err := tc.reference(t.Row(d), offered)
	switch {
	case err != nil:
		return scorers.Reference{}, false
	case has:
		ref.Content, ref.ToolCalls = "", calls
	case ref.Content == "":
		ref.Content = "None of the available functions can answer this request."
	}
	return ref, true
}

// Description is the task file's description, for the leaderboard.
func (t *Task) Description() string { return t.c.Spec.Description }

// ClusterBy says what samples are clustered by: the task file's cluster
// column, empty when it names none.
func (t *Task) ClusterBy() string { return t.c.Spec.Columns.Cluster }

// Cluster is the cluster of a task file's result row (its Details'), empty
// for a sample that is a cluster of its own.
func (t *Task) Cluster(r schemas.ResultRow) string {
	if r.DetailsJSON == "" || !strings.Contains(r.DetailsJSON, `"cluster"`) {
		return ""
	}
	var d struct {
		Cluster string `json:"cluster"`
	}
	_ = json.Unmarshal([]byte(r.DetailsJSON), &d)
	return d.Cluster
}

// SandboxQueue is the task queue a task file with a code scorer is scored
// on (the sandbox workers', as IFEvalCode's).
const SandboxQueue = "sandbox"

// SandboxTask is the Task of a task file with a code scorer: Evaluate only
// generates, and Score (a scorers.DeferredScorer on SandboxQueue) scores
// every reply with every scorer, the code scorers in the sandbox. A task
// file without a code scorer is a plain Task, so only the task files that
// run code need sandbox workers.
type SandboxTask struct {
	*Task
	runner *lang.Runner
	// slots bound the replies run at once by this task, so a worker runs
	// about one program per CPU however many samples are scored at once.
	slots chan struct{}
}

var (
	_ scorers.Task           = (*SandboxTask)(nil)
	_ scorers.DeferredScorer = (*SandboxTask)(nil)
)

// NewTaskWith is the evaluation task of a compiled task file on a worker
// whose sandbox is sb (nil on workers without one): a *SandboxTask when
// the task file has a code scorer, else a *Task.
func NewTaskWith(c *Compiled, sb lang.Sandboxer) scorers.Task {
	t := NewTask(c)
	if !c.HasSandbox() {
		return t
	}
	st := &SandboxTask{Task: t, slots: make(chan struct{}, runtime.NumCPU())}
	if sb != nil {
		st.runner = lang.NewRunner(sb, lang.Config{})
	}
	return st
}

// ScoreQueue implements scorers.DeferredScorer.
func (*SandboxTask) ScoreQueue() string { return SandboxQueue }

// Score implements scorers.DeferredScorer: the reply Evaluate stored (the
// outcome's Response) is scored by every scorer. A failed test, a compile
// error or a timeout is the reply's (score 0, the status in the verdict);
// a sandbox failure or a worker without a sandbox is an error
// (infrastructure: retried, never scored).
func (t *SandboxTask) Score(ctx context.Context, s scorers.Sample, o scorers.Outcome) (scorers.Outcome, error) {
	if t.runner == nil {
		return o, errors.New("taskfile: this worker has no sandbox: a task file with a code scorer is scored on the sandbox queue's workers")
	}
	d, ok := s.Row.(*sample)
	if !ok {
		return o, fmt.Errorf("taskfile: sample %s: %w: row is %T", s.ID, scorers.ErrBadSample, s.Row)
	}
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return o, ctx.Err()
	}
	defer func() { <-t.slots }()
	replies := []Reply{{Text: o.Response}}
	if n := t.c.Spec.Generation.N(); n > 1 {
		stored, err := storedReplies(o.Details)
		if err != nil || len(stored) != n {
			return o, fmt.Errorf("taskfile: sample %s: the stored details hold %d replies, want %d (generation.repeats): %v", s.ID, len(stored), n, err)
		}
		replies = replies[:0]
		for _, r := range stored {
			replies = append(replies, Reply{Text: r.Response})
		}
	}
	metrics, verdicts, each, err := t.c.ScoreSandboxed(ctx, t.runner, t.Row(d), replies)
	if err != nil {
		return o, fmt.Errorf("taskfile: sample %s: %w", s.ID, err)
	}
	o.Metrics = metrics
	dt := Details{Verdicts: verdicts, Cluster: d.row.Cluster}
	if len(each) > 1 {
		dt.Replies = make([]ReplyVerdicts, len(each))
		for i := range each {
			dt.Replies[i] = ReplyVerdicts{Response: replies[i].Text, Verdicts: each[i]}
		}
	}
	o.Details = dt
	return o, nil
}

// storedReplies are the replies Evaluate kept in an outcome's details: the
// value itself (in process) or its JSON decoding (as the engine hands it
// back).
func storedReplies(details any) ([]ReplyVerdicts, error) {
	switch v := details.(type) {
	case Details:
		return v.Replies, nil
	case *Details:
		if v != nil {
			return v.Replies, nil
		}
		return nil, nil
	case nil:
		return nil, nil
	}
	b, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	var d Details
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	return d.Replies, nil
}
