package taskfile

import (
	"errors"
	"fmt"
	"github.com/benchline/benchline/internal/pyrandom"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"
)

// Compiled is a task file ready to render prompts and score replies.
type Compiled struct {
	File string
	Spec *Spec
	doc  *yaml.Node

	messages  []*Template
	shotUser  *Template
	shotReply *Template
	// userPath and replyPath are where the few-shot templates are written
	// (the last message's and the target, by default).
	userPath, replyPath []any
	scorers             []scorer
}

// Load parses and compiles a task file's bytes.
func Load(file string, data []byte) (*Compiled, error) {
	spec, doc, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	return Compile(file, spec, doc)
}

// Compile compiles spec's templates and scorers; every error names file,
// the line and the key.
func Compile(file string, spec *Spec, doc *yaml.Node) (*Compiled, error) {
	c := &Compiled{File: file, Spec: spec, doc: doc}
	tmpl := func(src string, path ...any) (*Template, error) {
		t, err := compileTemplate(src)
		if err != nil {
			return nil, &Error{File: file, Line: lineOf(doc, path...), Key: keyName(path...), Msg: err.Error()}
		}
		return t, nil
	}
	for i, m := range spec.Prompt.Messages {
		t, err := tmpl(m.Content, "prompt", "messages", i, "content")
		if err != nil {
			return nil, err
		}
		c.messages = append(c.messages, t)
	}
	if f := spec.Prompt.Fewshot; f != nil {
		user := f.User
		if user == "" {
			user = spec.Prompt.Messages[spec.Prompt.Question()].Content
		}
		reply := f.Assistant
		if reply == "" {
			reply = "{{ " + spec.Columns.Target + " }}"
			if !identRE.MatchString(spec.Columns.Target) {
				reply = "{{ __row__[" + quote(spec.Columns.Target) + "] }}"
			}
		}
		c.userPath, c.replyPath = []any{"prompt", "fewshot", "user"}, []any{"prompt", "fewshot", "assistant"}
		if f.User == "" {
			c.userPath = []any{"prompt", "messages", spec.Prompt.Question(), "content"}
		}
		if f.Assistant == "" {
			c.replyPath = []any{"columns", "target"}
		}
		var err error
		if c.shotUser, err = tmpl(user, c.userPath...); err != nil {
			return nil, err
		}
		if c.shotReply, err = tmpl(reply, c.replyPath...); err != nil {
			return nil, err
		}
	}
	for i, s := range spec.Scorers {
		sc, err := newScorer(s, spec)
		if err != nil {
			var pe *paramError
			if errors.As(err, &pe) {
				line := pe.line
				if line == 0 {
					line = s.line
				}
				return nil, &Error{File: file, Line: line, Key: fmt.Sprintf("scorers[%d].%s", i, pe.key), Msg: pe.msg}
			}
			return nil, &Error{File: file, Line: s.line, Key: fmt.Sprintf("scorers[%d]", i), Msg: err.Error()}
		}
		c.scorers = append(c.scorers, sc)
	}
	if err := c.checkJudged(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkJudged checks what a task's judged scorers share: one default
// panel, and metric names of their own.
func (c *Compiled) checkJudged() error {
	var panel []string
	first := -1
	for i, s := range c.scorers {
		j, ok := s.(judgedScorer)
		if !ok {
			continue
		}
		sc := c.Spec.Scorers[i]
		if d := j.panelDefault(); len(d) > 0 {
			if first >= 0 && !slices.Equal(d, panel) {
				return &Error{File: c.File, Line: paramLine(sc.Params, "judges"), Key: fmt.Sprintf("scorers[%d].judges", i),
					Msg: fmt.Sprintf("differs from scorers[%d].judges: a run has one judge panel, give it once (or the same)", first)}
			}
			panel, first = d, i
		}
	}
	if !c.Judged() {
		return nil
	}
	jl := 0 // the first judged scorer's line
	for i, s := range c.scorers {
		if _, ok := s.(judgedScorer); ok {
			jl = c.Spec.Scorers[i].line
			break
		}
	}
	if n := c.Spec.Generation.N(); n > 1 {
		return &Error{File: c.File, Line: jl, Key: "generation.repeats", Msg: fmt.Sprintf("is %d: judged scorers (rubric, scale, qa_grade) judge one reply per row; use repeats 1", n)}
	}
	if c.HasSandbox() {
		return &Error{File: c.File, Line: jl, Key: "scorers", Msg: "a code scorer and a judged scorer in one task file are not supported: code is scored on the sandbox queue, judges on the model queue; make two task files"}
	}
	for i, sc := range c.Spec.Scorers {
		if reservedMetric(sc.Metric()) {
			return &Error{File: c.File, Line: sc.line, Key: fmt.Sprintf("scorers[%d].name", i),
				Msg: fmt.Sprintf("%q is a metric a judged task reports of its own: choose another name", sc.Metric())}
		}
	}
	return nil
}

// Metrics are the task's metrics, the headline first: the scorers', then
// what judged scorers add (a rubric's sub-metrics, judge_error_rate,
// panel_unanimous).
func (c *Compiled) Metrics() []string { return append(c.Spec.Metrics(), c.judgedMetrics()...) }

// vars are what a template sees: the row's columns by name, and the
// whole row as __row__ (for columns whose names are not identifiers).
func vars(r Row) map[string]any {
	v := make(map[string]any, len(r.Fields)+1)
	for k, x := range r.Fields {
		v[k] = x
	}
	v["__row__"] = r.Fields
	return v
}

// RenderError is a template that failed on a row: it names the task file,
// the template's line and key, and the row.
type RenderError struct {
	File string
	Line int
	Key  string
	Row  string
	Msg  string
}

func (e *RenderError) Error() string {
	return fmt.Sprintf("%s:%d: %s: row %s: %s", e.File, e.Line, e.Key, e.Row, e.Msg)
}

// Messages renders the chat for r, with shots (rows of the few-shot split)
// as user and assistant turns before the user's last message.
func (c *Compiled) Messages(r Row, shots []Row) ([]openai.ChatCompletionMessage, error) {
	fail := func(err error, row string, path ...any) error {
		return &RenderError{File: c.File, Line: lineOf(c.doc, path...), Key: keyName(path...), Row: row, Msg: err.Error()}
	}
	v := vars(r)
	q := c.Spec.Prompt.Question()
	out := make([]openai.ChatCompletionMessage, 0, len(c.messages)+2*len(shots))
	for i, t := range c.messages[:q] {
		text, err := t.render(v)
		if err != nil {
			return nil, fail(err, r.ID, "prompt", "messages", i, "content")
		}
		if text == "" && c.Spec.Prompt.Messages[i].Optional {
			continue // an optional message that renders empty is not sent
		}
		out = append(out, openai.ChatCompletionMessage{Role: c.Spec.Prompt.Messages[i].Role, Content: text})
	}
	for _, s := range shots {
		sv := vars(s)
		q, err := c.shotUser.render(sv)
		if err != nil {
			return nil, fail(err, s.ID+" (a few-shot example)", c.userPath...)
		}
		a, err := c.shotReply.render(sv)
		if err != nil {
			return nil, fail(err, s.ID+" (a few-shot example)", c.replyPath...)
		}
		out = append(out,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: q},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a})
	}
	for i := q; i < len(c.messages); i++ {
		text, err := c.messages[i].render(v)
		if err != nil {
			return nil, fail(err, r.ID, "prompt", "messages", i, "content")
		}
		if i > q && text == "" {
			continue // a start of the reply that renders empty is not sent
		}
		out = append(out, openai.ChatCompletionMessage{Role: c.Spec.Prompt.Messages[i].Role, Content: text})
	}
	return out, nil
}

// Verdict is one scorer's result on a reply.
type Verdict struct {
	Metric string  `json:"metric"`
	Score  float64 `json:"score"`
	Why    string  `json:"why,omitempty"`
	// Status is a code scorer's sandbox status (CodeStatuses).
	Status string `json:"status,omitempty"`
}

// Score scores reply with every scorer but the judged ones, which need
// judge models (ScoreJudged): their verdicts say so, without a metric.
func (c *Compiled) Score(r Row, reply Reply) (map[string]float64, []Verdict) {
	m := make(map[string]float64, len(c.scorers))
	vs := make([]Verdict, 0, len(c.scorers))
	for i, s := range c.scorers {
		if _, ok := s.(judgedScorer); ok {
			vs = append(vs, Verdict{Metric: c.Spec.Scorers[i].Metric(), Why: notJudgedHere})
			continue
		}
		score, why := s.score(reply, r)
		name := c.Spec.Scorers[i].Metric()
		m[name] = score
		vs = append(vs, Verdict{Metric: name, Score: score, Why: why})
	}
	return m, vs
}

// Shots draws the few-shot examples for a row: Fewshot.N rows of pool
// (the few-shot split), the same for every row of the task (drawn by the
// seed once), never the row itself.
func (c *Compiled) Shots(pool []Row, r Row) []Row {
	f := c.Spec.Prompt.Fewshot
	if f == nil || len(pool) == 0 {
		return nil
	}
	idx := ShotOrder(len(pool), f.Seed)
	out := make([]Row, 0, f.N)
	for _, i := range idx {
		if len(out) == f.N {
			break
		}
		if pool[i].ID == r.ID && pool[i].Target == r.Target {
			continue
		}
		out = append(out, pool[i])
	}
	return out
}

// prompt.fewshot's samplers.
const (
	SamplerShuffle = "shuffle"
	SamplerPython  = "python"
	SamplerFirst   = "first"
)

// ShotDrawer draws each row's few-shot examples from pool (the few-shot
// split's rows in the data's order): call it once per row, in the test
// split's order, since the python sampler's state runs on from row to row
// as lm-eval's does (a row skipped by the build draws nothing). With
// drop_same, pool rows whose columns all equal the row's are left out as
// lm-eval's rm_eval_doc leaves them: python draws n+1 and keeps the first
// n others, first keeps the first n others; a row that leaves fewer than
// n is an error naming it (lm-eval's assertion).
func (c *Compiled) ShotDrawer(pool []Row) func(Row) ([]Row, error) {
	f := c.Spec.Prompt.Fewshot
	if f == nil {
		return func(Row) ([]Row, error) { return nil, nil }
	}
	// A draw that cannot be made is the data's fault: an *Error naming
	// prompt.fewshot (a build ends at once, not retried).
	bad := func(msg string) error {
		return &Error{File: c.File, Line: lineOf(c.doc, "prompt", "fewshot"), Key: "prompt.fewshot", Msg: msg}
	}
	keep := func(r Row, rows []Row) ([]Row, error) {
		if !f.DropSame {
			return rows, nil
		}
		out := make([]Row, 0, f.N)
		for _, s := range rows {
			if len(out) == f.N {
				break
			}
			if !sameRow(s, r) {
				out = append(out, s)
			}
		}
		if len(out) < f.N {
			return nil, bad(fmt.Sprintf("row %s: %d examples of split %q are left once the rows equal to it are dropped (drop_same), fewer than n (%d)", r.ID, len(out), f.From, f.N))
		}
		return out, nil
	}
	switch f.Sampler {
	case SamplerPython:
		rnd := pyrandom.New(f.Seed)
		k := f.N
		if f.DropSame {
			k++ // lm-eval's sample(n+1), then rm_eval_doc
		}
		return func(r Row) ([]Row, error) {
			idx, err := rnd.Sample(len(pool), k)
			if err != nil {
				return nil, bad(fmt.Sprintf("split %q: %v", f.From, err))
			}
			out := make([]Row, len(idx))
			for i, j := range idx {
				out[i] = pool[j]
			}
			if !f.DropSame {
				return out, nil
			}
			return keep(r, out)
		}
	case SamplerFirst:
		return func(r Row) ([]Row, error) {
			if len(pool) < f.N {
				return nil, bad(fmt.Sprintf("split %q has %d rows, fewer than n (%d)", f.From, len(pool), f.N))
			}
			if !f.DropSame {
				return pool[:f.N], nil
			}
			return keep(r, pool)
		}
	}
	return func(r Row) ([]Row, error) { return c.Shots(pool, r), nil }
}

// sameRow says whether two rows' columns are all equal, as Python's ==
// compares two documents (a NaN equals nothing).
func sameRow(a, b Row) bool { return reflect.DeepEqual(a.Fields, b.Fields) }

// ShotOrder is the order in which few-shot examples are drawn from a pool
// of n: a permutation by seed (PCG), stable across platforms and Go
// versions.
func ShotOrder(n int, seed int64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	rng.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	return idx
}

// Columns are the columns the task reads from every row by role (id,
// category, target, cluster, tools), for the data reader's checks.
func (c *Compiled) Columns() map[string]string {
	out := map[string]string{}
	cols := c.Spec.Columns
	for role, col := range map[string]string{"category": cols.Category, "target": cols.Target, "cluster": cols.Cluster, "tools": c.Spec.Prompt.Tools, "id": cols.ID} {
		if col != "" {
			out[role] = col
		}
	}
	return out
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// A listScorer scores a sample's replies together (one per repeat; a vote
// over them, say) instead of each one: ScoreReplies gives it the whole
// list. A scorer that is not one scores each reply, and the sample has the
// mean.
type listScorer interface {
	scoreList(replies []Reply, r Row) (float64, string)
}

// ReplyVerdicts are one reply of a sample asked several times
// (generation.repeats) and its verdicts.
type ReplyVerdicts struct {
	Response string    `json:"response"`
	Verdicts []Verdict `json:"verdicts"`
}

// ScoreReplies scores a sample's replies (one per repeat) with every
// scorer: each metric is the mean of its scores over the replies (a
// listScorer's, its score of the list), and each reply keeps its own
// verdicts. With one reply it is Score.
func (c *Compiled) ScoreReplies(r Row, replies []Reply) (map[string]float64, []Verdict, [][]Verdict) {
	m, vs, each, _ := c.scoreReplies(r, replies, func(reply Reply) ([]Verdict, error) {
		_, v := c.Score(r, reply)
		return v, nil
	})
	return m, vs, each
}

// scoreReplies scores each reply with one (every scorer's verdicts, in
// order), then makes the sample's verdicts: the mean, or a listScorer's.
func (c *Compiled) scoreReplies(r Row, replies []Reply, one func(Reply) ([]Verdict, error)) (map[string]float64, []Verdict, [][]Verdict, error) {
	each := make([][]Verdict, len(replies))
	for i, reply := range replies {
		vs, err := one(reply)
		if err != nil {
			if len(replies) > 1 {
				err = fmt.Errorf("reply %d: %w", i+1, err)
			}
			return nil, nil, nil, err
		}
		each[i] = vs
	}
	if len(replies) == 1 {
		m := make(map[string]float64, len(each[0]))
		for _, v := range each[0] {
			m[v.Metric] = v.Score
		}
		return m, each[0], each, nil
	}
	m := make(map[string]float64, len(c.scorers))
	vs := make([]Verdict, 0, len(c.scorers))
	for i, s := range c.scorers {
		name := c.Spec.Scorers[i].Metric()
		v := Verdict{Metric: name}
		if ls, ok := s.(listScorer); ok {
			v.Score, v.Why = ls.scoreList(replies, r)
		} else {
			sum, right := 0.0, 0
			for _, e := range each {
				sum += e[i].Score
				if e[i].Score == 1 {
					right++
				}
			}
			v.Score = sum / float64(len(replies))
			v.Why = fmt.Sprintf("mean over %d replies (%d scored 1)", len(replies), right)
		}
		m[name] = v.Score
		vs = append(vs, v)
	}
	return m, vs, each, nil
}
