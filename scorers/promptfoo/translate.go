package promptfoo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"

	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/taskfile"
)

// ScorerType is the task-file scorer type that grades a reply with the
// row's promptfoo test; its parameter metric says which of promptfoo's
// figures it gives: pass (1 or 0) or score (the weighted score).
const ScorerType = "promptfoo"

// SampleColumn is the rows' column holding the sample and its test (JSON),
// which the promptfoo scorer grades with.
const SampleColumn = "pf_sample"

// ToolsColumn is the rows' column holding the tools the config's provider
// offers (config.tools), which the task file's prompt.tools names.
const ToolsColumn = "pf_tools"

// MaxRowsBytes bounds a translation's rows (every sample's chat, vars
// and test as JSON Lines), which are held in memory and written at once.
const MaxRowsBytes = 256 << 20

// maxRowsBytes is MaxRowsBytes, lowered by tests.
var maxRowsBytes = MaxRowsBytes

// JudgedScorerType is ScorerType for a config with judged assertions: a
// judged scorer, asking the run's judge panel (see judged.go).
const JudgedScorerType = "promptfoo-judged"

func init() {
	taskfile.RegisterScorer(ScorerType, newScorer)
	taskfile.RegisterJudgedScorer(JudgedScorerType, newJudgedScorer)
}

// stored is what a row carries for the scorer.
type stored struct {
	Sample   Sample   `json:"sample"`
	Test     Test     `json:"test"`
	Provider Provider `json:"provider"`
}

// metricParam reads a promptfoo scorer's metric: pass or score.
func metricParam(params yaml.Node) (string, error) {
	var p struct {
		Type   string `yaml:"type"`
		Name   string `yaml:"name"`
		Metric string `yaml:"metric"`
	}
	if err := params.Decode(&p); err != nil {
		return "", fmt.Errorf("promptfoo scorer: %w", err)
	}
	if p.Metric != "pass" && p.Metric != "score" {
		return "", fmt.Errorf("promptfoo scorer: metric: want pass or score, not %q", p.Metric)
	}
	return p.Metric, nil
}

func newScorer(params yaml.Node, _ *taskfile.Spec) (taskfile.ScoreFunc, error) {
	metric, err := metricParam(params)
	if err != nil {
		return nil, err
	}
	p := struct{ Metric string }{metric}
	// A translated config asks once per sample (promptfoo's repeat is not
	// read), so replies is one reply; were there several, the score is
	// their mean, as task files average repeats.
	return func(replies []taskfile.Reply, r taskfile.Row) (float64, string) {
		raw, _ := r.Fields[SampleColumn].(string)
		st, err := decodeStored(raw)
		if err != nil {
			return 0, fmt.Sprintf("row %s: column %s: %v", r.ID, SampleColumn, err)
		}
		var sum float64
		var reasons []string
		for _, reply := range replies {
			res := Grade(st.Test, st.Provider, st.Sample, OutputOf(reply.Text, reply.ToolCalls))
			reasons = append(reasons, res.Reason)
			switch {
			case p.Metric == "score":
				sum += res.Score
			case res.Pass:
				sum++
			}
		}
		if len(replies) == 0 {
			return 0, "no reply"
		}
		return sum / float64(len(replies)), strings.Join(reasons, "; ")
	}, nil
}

// judgingMemo is the key under which a sample's judging is kept for its
// other promptfoo-judged scorer (pass and score read one judging).
const judgingMemo = "promptfoo-judging"

// newJudgedScorer is the promptfoo-judged scorer: the row's test graded
// with the run's judges answering its judged assertions. The judges are
// asked once per sample (the pass and score scorers share the judging;
// its audit records are stored with the first). A test with an assertion
// no judge answered has no pass or score.
func newJudgedScorer(params yaml.Node, _ *taskfile.Spec) (taskfile.JudgedScoreFunc, error) {
	metric, err := metricParam(params)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, j *taskfile.Judges, _ []openai.ChatCompletionMessage, reply taskfile.Reply, r taskfile.Row) (taskfile.Judgement, error) {
		jm := taskfile.Judgement{Type: JudgedScorerType}
		var g *judging
		if v, ok := j.Memo(judgingMemo); ok {
			g = v.(*judging)
		} else {
			raw, _ := r.Fields[SampleColumn].(string)
			st, err := decodeStored(raw)
			if err != nil {
				return jm, fmt.Errorf("promptfoo: row %s: column %s: %v: %w", r.ID, SampleColumn, err, scorers.ErrBadSample)
			}
			if g, err = judgeSample(ctx, j, st, OutputOf(reply.Text, reply.ToolCalls)); err != nil {
				return jm, err
			}
			j.Keep(judgingMemo, g)
			jm.Judges, jm.Items, jm.JudgeErrors = g.records, g.items, g.errors
		}
		if !g.judged {
			return jm, nil
		}
		score := g.res.Score
		if metric == "pass" {
			score = b2f(g.res.Pass)
		}
		jm.Score = &score
		var why []string
		for _, c := range g.res.Components {
			if slices.Contains(Judged, strings.TrimPrefix(c.Type, "not-")) {
				why = append(why, c.Type+": "+c.Reason)
			}
		}
		jm.Why = strings.Join(append([]string{g.res.Reason}, why...), "; ")
		return jm, nil
	}, nil
}

// decodeStored reads a row's sample back: JSON numbers that are integers
// become ints and others float64, as the config's YAML gave them.
func decodeStored(raw string) (stored, error) {
	var st stored
	if raw == "" {
		return st, fmt.Errorf("empty: not a row of a translated promptfoo config")
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, err
	}
	// Vars and assertion values hold any: read them again keeping the
	// numbers' kinds.
	var loose struct {
		Sample struct {
			Vars map[string]json.RawMessage `json:"vars"`
		} `json:"sample"`
		Test struct {
			Vars   map[string]json.RawMessage `json:"vars"`
			Assert []struct {
				Value json.RawMessage `json:"value"`
			} `json:"assert"`
		} `json:"test"`
	}
	if err := json.Unmarshal([]byte(raw), &loose); err != nil {
		return st, err
	}
	for k, v := range loose.Sample.Vars {
		st.Sample.Vars[k] = numbers(v)
	}
	for k, v := range loose.Test.Vars {
		st.Test.Vars[k] = numbers(v)
	}
	for i, a := range loose.Test.Assert {
		if i < len(st.Test.Assert) && len(a.Value) > 0 {
			st.Test.Assert[i].Value = numbers(a.Value)
		}
	}
	return st, nil
}

func numbers(raw json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return fixNumbers(v)
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
	}
	return v
}

var nameBad = regexp.MustCompile(`[^a-z0-9-]+`)

// TaskName is the benchline name of a config file: its base name without
// the extension, lower case, every run of other characters a dash.
func TaskName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	n := strings.Trim(nameBad.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if n == "" || n[0] < 'a' || n[0] > 'z' {
		n = "pf-" + n
	}
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "-")
	}
	return n
}

// Translation is a config as a task file and its rows.
type Translation struct {
	// TaskFile is the task file (YAML); its data is RowsFile, beside it.
	TaskFile []byte
	// Rows are the rows, JSON Lines: one a sample (prompt x test), id
	// p<prompt>-t<test>, the rendered chat in columns pf_m0, pf_m1, ...,
	// the test's vars as columns, the sample and its test in pf_sample.
	Rows []byte
}

// Translate writes c as a task file whose data is rowsFile (a name
// relative to the task file): every sample a row carrying its rendered
// chat, so file:// prompts and tests are in the rows (and so in the built
// version), and two promptfoo scorers, pass (the headline) and score.
// Samples whose chats differ in their roles share one list of messages
// (the task file's prompt), each filling its own and the others optional;
// the first provider's tools are offered with every row.
func (c *Config) Translate(rowsFile string) (*Translation, error) {
	samples, err := c.Samples()
	if err != nil {
		return nil, err
	}
	var prov Provider
	if len(c.Providers) > 0 {
		prov = c.Providers[0]
	}
	// The first provider's tools are offered with every row (a column the
	// task file's prompt.tools names); a dataset offers one set of tools.
	first, _ := json.Marshal(prov.Tools)
	for i, p := range c.Providers {
		if b, _ := json.Marshal(p.Tools); i > 0 && !bytes.Equal(b, first) {
			return nil, &Error{File: c.File, Key: fmt.Sprintf("providers[%d].config.tools", i), Msg: "differ from providers[0]'s: a dataset offers its model one set of tools (build a config per set)"}
		}
	}
	// The task file's messages are a sequence of roles every sample's chat
	// fits in (the shortest common supersequence of their roles, which
	// ends with the user's message as each chat does); a sample fills the
	// messages of its own roles, and a message not every sample fills is
	// optional: left out where it renders empty.
	var roles []string
	seen := map[string]bool{}
	for _, s := range samples {
		var rs []string
		for _, m := range s.Messages {
			rs = append(rs, m.Role)
		}
		if last := len(rs) - 1; last < 0 || rs[last] != "user" {
			role := "no"
			if last >= 0 {
				role = rs[last]
			}
			return nil, &Error{File: c.File, Key: fmt.Sprintf("prompts[%d]", s.Prompt), Msg: fmt.Sprintf("tests[%d]: the chat's last message is role %s: a dataset's chat ends with the user's message", s.Test, role)}
		}
		if k := strings.Join(rs, ","); !seen[k] {
			seen[k] = true
			if roles = supersequence(roles, rs); len(roles) > MaxMessages {
				return nil, &Error{File: c.File, Key: fmt.Sprintf("prompts[%d]", s.Prompt), Msg: fmt.Sprintf("tests[%d]: the prompts' chats differ in their roles so that one sequence holding them all has %d messages, over %d: build the prompts as separate configs", s.Test, len(roles), MaxMessages)}
			}
		}
	}
	filled := make([]int, len(roles))
	slotsOf := make([][]int, len(samples))
	for n, s := range samples {
		slotsOf[n] = embed(s.Messages, roles)
		for _, k := range slotsOf[n] {
			filled[k]++
		}
	}
	var rows bytes.Buffer
	for n, s := range samples {
		slots := slotsOf[n]
		row := map[string]any{}
		for k, v := range s.Vars {
			row[k] = v
		}
		if len(prov.Tools) > 0 {
			row[ToolsColumn] = prov.Tools
		}
		for _, k := range []string{"id", "prompt_label", SampleColumn, ToolsColumn} {
			if _, ok := s.Vars[k]; ok {
				return nil, &Error{File: c.File, Key: fmt.Sprintf("tests[%d].vars.%s", s.Test, k), Msg: "is a column the translated rows use: rename the var"}
			}
		}
		for i := range roles {
			k := fmt.Sprintf("pf_m%d", i)
			if _, ok := s.Vars[k]; ok {
				return nil, &Error{File: c.File, Key: fmt.Sprintf("tests[%d].vars.%s", s.Test, k), Msg: "is a column the translated rows use: rename the var"}
			}
			row[k] = ""
		}
		for i, m := range s.Messages {
			row[fmt.Sprintf("pf_m%d", slots[i])] = m.Content
			if m.Content == "" && filled[slots[i]] < len(samples) {
				return nil, &Error{File: c.File, Key: fmt.Sprintf("prompts[%d]", s.Prompt), Msg: fmt.Sprintf("tests[%d]: the chat's message %d (%s) renders empty, in a place of the chat other prompts leave out: it would be left out, where promptfoo sends it", s.Test, i, m.Role)}
			}
		}
		st, err := json.Marshal(stored{Sample: s, Test: c.Tests[s.Test], Provider: prov})
		if err != nil {
			return nil, &Error{File: c.File, Key: fmt.Sprintf("tests[%d]", s.Test), Msg: err.Error()}
		}
		row["id"] = s.ID
		label := c.Prompts[s.Prompt].Label
		if label == "" {
			label = fmt.Sprintf("prompt %d", s.Prompt)
		}
		row["prompt_label"] = label
		row[SampleColumn] = string(st)
		line, err := json.Marshal(row)
		if err != nil {
			return nil, &Error{File: c.File, Key: fmt.Sprintf("tests[%d].vars", s.Test), Msg: err.Error()}
		}
		if rows.Len()+len(line) >= maxRowsBytes {
			return nil, &Error{File: c.File, Key: fmt.Sprintf("tests[%d]", s.Test), Msg: fmt.Sprintf("prompts[%d]: the translated rows pass %d bytes, the limit: split the config", s.Prompt, maxRowsBytes)}
		}
		rows.Write(line)
		rows.WriteByte('\n')
	}
	var msgs []map[string]any
	for i, r := range roles {
		m := map[string]any{"role": r, "content": fmt.Sprintf("{{ pf_m%d }}", i)}
		if filled[i] < len(samples) {
			m["optional"] = true
		}
		msgs = append(msgs, m)
	}
	prompt := map[string]any{"messages": msgs}
	if len(prov.Tools) > 0 {
		prompt["tools"] = ToolsColumn
	}
	typ := ScorerType
	if c.Judged() {
		typ = JudgedScorerType
	}
	desc := c.Description
	if desc == "" {
		desc = "promptfoo config " + filepath.Base(c.File)
	}
	spec := map[string]any{
		"name":        TaskName(c.File),
		"description": desc,
		"metric":      "pass",
		"data":        map[string]any{"test": map[string]any{"path": rowsFile, "format": "jsonl"}},
		"columns":     map[string]any{"id": "id", "category": "prompt_label"},
		"prompt":      prompt,
		"scorers": []map[string]any{
			{"type": typ, "name": "pass", "metric": "pass"},
			{"type": typ, "name": "score", "metric": "score"},
		},
	}
	if len(c.Providers) > 0 {
		gen := map[string]any{}
		if prov.Temperature != nil {
			gen["temperature"] = *prov.Temperature
		}
		if prov.MaxTokens > 0 {
			gen["max_tokens"] = prov.MaxTokens
		}
		if len(gen) > 0 {
			spec["generation"] = gen
		}
	}
	tf, err := yaml.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return &Translation{TaskFile: tf, Rows: rows.Bytes()}, nil
}

// MaxMessages bounds the messages of a translated config's chat: the
// sequence of roles that holds every prompt's chat.
const MaxMessages = 64

// supersequence is a shortest sequence holding both a and b as
// subsequences (from their longest common subsequence), a system message
// as early as such a sequence allows; when both end with the same role,
// so does it, once.
func supersequence(a, b []string) []string {
	if a == nil {
		return slices.Clone(b)
	}
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j] && lcs[i][j] == lcs[i+1][j+1]+1:
			out = append(out, a[i])
			i++
			j++
		case lcs[i+1][j] > lcs[i][j+1] || lcs[i+1][j] == lcs[i][j+1] && b[j] != "system":
			out = append(out, a[i])
			i++
		default:
			out = append(out, b[j])
			j++
		}
	}
	return append(append(out, a[i:]...), b[j:]...)
}

// embed places a chat's messages in roles, of which their roles are a
// subsequence: from the end, each message in the last place of its role
// left, so that the user's last message is the last place.
func embed(msgs []Message, roles []string) []int {
	at := make([]int, len(msgs))
	k := len(roles) - 1
	for i := len(msgs) - 1; i >= 0; i-- {
		for k >= 0 && roles[k] != msgs[i].Role {
			k--
		}
		at[i] = k
		k--
	}
	return at
}
