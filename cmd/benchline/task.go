package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	"github.com/spf13/cobra"

	"github.com/benchline/benchline/datasets"
	dtask "github.com/benchline/benchline/datasets/taskfile"
	"github.com/benchline/benchline/internal/app"
	"github.com/benchline/benchline/internal/limits"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/internal/registry"
	"github.com/benchline/benchline/internal/source"
	"github.com/benchline/benchline/scorers/lmeval"
	"github.com/benchline/benchline/scorers/promptfoo"
	"github.com/benchline/benchline/scorers/taskfile"
)

// newTaskCmd is `benchline task`: what a task file's author runs, with no
// stack (docs/tasks.md).
func newTaskCmd(g *globals) *cobra.Command {
	task := &cobra.Command{Use: "task", Short: "Work on a task file: a benchmark written as YAML (docs/tasks.md)"}
	task.AddCommand(newTaskCheckCmd(g), newTaskCompatCmd(), newTaskConvertCmd())
	return task
}

// checkReport is `task check --json`'s output.
type checkReport struct {
	Task    string             `json:"task"`
	Metrics []string           `json:"metrics"`
	Samples []checkSample      `json:"samples"`
	Skipped map[string]int     `json:"skipped,omitempty"`
	Means   map[string]float64 `json:"means,omitempty"`
	Scored  int                `json:"scored"`
}

type checkSample struct {
	ID       string              `json:"id"`
	Category string              `json:"category,omitempty"`
	Target   string              `json:"target,omitempty"`
	Messages []map[string]string `json:"messages"`
	Reply    *string             `json:"reply,omitempty"`
	Verdicts []taskfile.Verdict  `json:"verdicts,omitempty"`
}

func newTaskCheckCmd(g *globals) *cobra.Command {
	var (
		rows    int
		replies string
		asJSON  bool
		data    []string
	)
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Check a task file, render its first prompts and score given replies, locally with no stack",
		Long: `Check a task file: parse it, compile its templates and scorers, read its test split
(relative to the task file; FILE may be an http(s):// or s3:// URL, whose data paths are read
from its folder through the same bounded reader as a build), render the first --rows prompts and, with
--replies FILE (JSON lines {"id", "reply", "tool_calls": [{"name", "arguments"}]}, reply or
tool_calls or both), score those replies with the task's scorers.
Nothing is built and no model is called: this is the task author's edit loop.

Exit status: 0 when the task file is valid and every prompt rendered; 1 otherwise, with the
error naming the file, its line and key, and the row.`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if rows < 1 || rows > 10_000 {
				return fmt.Errorf("--rows %d: want 1 to 10000", rows)
			}
			dm, err := parseData(data)
			if err != nil {
				return err
			}
			var openS3 source.S3Opener
			if strings.HasPrefix(args[0], "s3://") {
				cfg, err := g.load()
				if err != nil {
					return err
				}
				openS3 = app.S3Opener(cfg)
			}
			rep, err := checkTaskFrom(cmd.Context(), openS3, args[0], rows, replies, dm)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printCheck(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 3, "prompts to render, from the start of the test split")
	cmd.Flags().StringVar(&replies, "replies", "", `JSON lines {"id", "reply", "tool_calls"} to score with the task's scorers`)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringArrayVar(&data, "data", nil, "an lm-evaluation-harness task's data: DATASET_PATH=DIR|FILE (a Hugging Face-layout folder, .parquet or .jsonl; repeatable)")
	return cmd
}

func checkTask(file string, rows int, repliesFile string, data map[string]string) (checkReport, error) {
	return checkTaskFrom(context.Background(), nil, file, rows, repliesFile, data)
}

// checkTaskFrom is checkTask for a FILE that may be an http(s):// or s3://
// URL (openS3 opens the latter's bucket): the task file and its data are
// read through the source layer, its relative data paths resolved against
// the URL's folder.
func checkTaskFrom(ctx context.Context, openS3 source.S3Opener, file string, rows int, repliesFile string, data map[string]string) (checkReport, error) {
	if strings.Contains(file, "://") {
		c, err := loadRemoteTask(ctx, openS3, file, data)
		if err != nil {
			return checkReport{}, err
		}
		return checkCompiled(ctx, openS3, c, rows, repliesFile)
	}
	if raw, err := readLocal(file); err == nil && promptfoo.Detect(raw) {
		if len(data) > 0 {
			return checkReport{}, fmt.Errorf("%s: --data is for lm-evaluation-harness task YAMLs (dataset_path); a promptfoo config names its tests itself", file)
		}
		return checkPromptfoo(file, raw, rows, repliesFile)
	}
	c, err := loadTaskFile(file, data)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) || errors.Is(err, limits.ErrTooLarge) {
			return checkReport{}, fmt.Errorf("task check: %w", err)
		}
		return checkReport{}, err
	}
	return checkCompiled(ctx, nil, c, rows, repliesFile)
}

// loadRemoteTask reads a task file at an http(s):// or s3:// URL through
// the source layer (bounded by limits.max_source_bytes and the task file
// limit) and compiles it.
func loadRemoteTask(ctx context.Context, openS3 source.S3Opener, file string, data map[string]string) (*taskfile.Compiled, error) {
	if !strings.HasPrefix(file, "http://") && !strings.HasPrefix(file, "https://") && !strings.HasPrefix(file, "s3://") {
		return nil, fmt.Errorf("task check %s: want a local path, an http(s):// or an s3:// URL", file)
	}
	if len(data) > 0 {
		return nil, fmt.Errorf("task check %s: --data is for a local lm-evaluation-harness task YAML", file)
	}
	dir, name := dtask.Split(file)
	loc, err := source.Parse(ctx, dir, openS3)
	if err != nil {
		return nil, fmt.Errorf("task check: %w", err)
	}
	rc, err := loc.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("task check: %w", err)
	}
	raw, err := limits.ReadFile(rc, file, taskfile.MaxFileBytes)
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("task check: %w", err)
	}
	if lmeval.Detect(raw) || promptfoo.Detect(raw) {
		return nil, fmt.Errorf("task check %s: an lm-evaluation-harness task or a promptfoo config is checked from a local file; a URL must be a task file", file)
	}
	return taskfile.Load(file, raw)
}

// checkCompiled renders a compiled task's first rows and scores the given
// replies.
func checkCompiled(ctx context.Context, openS3 source.S3Opener, c *taskfile.Compiled, rows int, repliesFile string) (checkReport, error) {
	var err error
	given := map[string]modelapi.Response{}
	if repliesFile != "" {
		if given, err = readReplies(repliesFile); err != nil {
			return checkReport{}, err
		}
	}
	var pool []taskfile.Row
	if fs := c.Spec.Prompt.Fewshot; fs != nil {
		if _, err := dtask.Rows(ctx, c, openS3, fs.From, 10_000, func(r taskfile.Row) error { pool = append(pool, r); return nil }); err != nil {
			return checkReport{}, err
		}
	}
	rep := checkReport{Task: c.Spec.Name, Metrics: c.Metrics(), Means: map[string]float64{}}
	want := rows
	if len(given) > want {
		want = 0 // every row, to find each reply's
	}
	seen := 0
	draw := c.ShotDrawer(pool)
	skipped, err := dtask.Rows(ctx, c, openS3, "test", 0, func(r taskfile.Row) error {
		seen++
		shots, err := draw(r) // every row, in order: the python sampler's state runs on
		if err != nil {
			return err
		}
		reply, has := given[r.ID]
		if seen > rows && !has {
			if want > 0 {
				return errStop
			}
			return nil
		}
		msgs, err := c.Messages(r, shots)
		if err != nil {
			return err
		}
		s := checkSample{ID: r.ID, Category: r.Category, Target: r.Target}
		for _, m := range msgs {
			s.Messages = append(s.Messages, map[string]string{"role": m.Role, "content": m.Content})
		}
		if has {
			shown := taskfile.Shown(reply)
			s.Reply = &shown
			metrics, verdicts := c.Score(r, c.ReplyOf(reply))
			s.Verdicts = verdicts
			for k, v := range metrics {
				rep.Means[k] += v
			}
			rep.Scored++
			delete(given, r.ID)
		}
		rep.Samples = append(rep.Samples, s)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return rep, err
	}
	if len(given) > 0 {
		ids := make([]string, 0, len(given))
		for id := range given {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return rep, fmt.Errorf("task check: %s: %d replies name no row of the test split: %s", repliesFile, len(ids), strings.Join(ids[:min(len(ids), 5)], ", "))
	}
	for k := range rep.Means {
		rep.Means[k] /= float64(rep.Scored)
	}
	if len(skipped) > 0 {
		rep.Skipped = skipped
	}
	return rep, nil
}

var errStop = errors.New("stop")

// readReplies reads JSON lines {"id", "reply", "tool_calls"}, bounded as
// source lines, as the model replies a task scores: a tool call's
// arguments are a JSON object or a string holding one (OpenAI's form).
func readReplies(file string) (map[string]modelapi.Response, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("task check: %w", err)
	}
	defer f.Close()
	out := map[string]modelapi.Response{}
	err = datasets.EachLine(f, file, func(line int, raw []byte) error {
		var r struct {
			ID        *string `json:"id"`
			Reply     *string `json:"reply"`
			ToolCalls *[]struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.ID == nil || (r.Reply == nil && r.ToolCalls == nil) {
			return &datasets.InputError{File: file, Line: line, Msg: `want a JSON object {"id": "...", "reply": "..."} or {"id": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}`}
		}
		var ch modelapi.Choice
		if r.Reply != nil {
			ch.Content = *r.Reply
		}
		if r.ToolCalls != nil {
			for i, tc := range *r.ToolCalls {
				args := string(tc.Arguments)
				var s string
				if json.Unmarshal(tc.Arguments, &s) == nil {
					args = s
				}
				if tc.Name == "" || strings.TrimSpace(args) == "" {
					return &datasets.InputError{File: file, Line: line, Msg: fmt.Sprintf("tool_calls[%d]: want {\"name\": \"...\", \"arguments\": {...}}", i)}
				}
				ch.ToolCalls = append(ch.ToolCalls, openai.ToolCall{ID: fmt.Sprintf("call_%d", i), Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: tc.Name, Arguments: args}})
			}
		}
		if _, dup := out[*r.ID]; dup {
			return &datasets.InputError{File: file, Line: line, Msg: fmt.Sprintf("id %q is given twice", *r.ID)}
		}
		if len(out) == 100_000 {
			return &datasets.InputError{File: file, Line: line, Msg: "more than 100000 replies, the limit of task check"}
		}
		out[*r.ID] = modelapi.Response{Choices: []modelapi.Choice{ch}}
		return nil
	})
	return out, err
}

func printCheck(w io.Writer, rep checkReport) {
	fmt.Fprintf(w, "task %s: valid; metrics %s\n", rep.Task, strings.Join(rep.Metrics, ", "))
	for _, s := range rep.Samples {
		fmt.Fprintf(w, "\n── %s", s.ID)
		if s.Category != "" {
			fmt.Fprintf(w, " (%s)", s.Category)
		}
		fmt.Fprintln(w)
		for _, m := range s.Messages {
			fmt.Fprintf(w, "[%s] %s\n", m["role"], m["content"])
		}
		if s.Target != "" {
			fmt.Fprintf(w, "target: %s\n", s.Target)
		}
		if s.Reply != nil {
			fmt.Fprintf(w, "reply: %s\n", *s.Reply)
			for _, v := range s.Verdicts {
				fmt.Fprintf(w, "  %s = %g", v.Metric, v.Score)
				if v.Why != "" {
					fmt.Fprintf(w, " (%s)", v.Why)
				}
				fmt.Fprintln(w)
			}
		}
	}
	if rep.Scored > 0 {
		fmt.Fprintf(w, "\nscored %d replies:", rep.Scored)
		for _, m := range rep.Metrics {
			fmt.Fprintf(w, " %s %.3f", m, rep.Means[m])
		}
		fmt.Fprintln(w)
	}
	for reason, n := range rep.Skipped {
		fmt.Fprintf(w, "skipped %d rows: %s\n", n, reason)
	}
}

// checkTaskFile checks a local task file before a build (so a bad one fails
// at once, here, naming its line) and returns its name and the URI the
// workers read it from: the absolute path (a worker's local file, as
// --source directories are), or the URL as given.
func checkTaskFile(file string) (name, uri string, err error) {
	if strings.Contains(file, "://") {
		if !strings.HasPrefix(file, "http://") && !strings.HasPrefix(file, "https://") && !strings.HasPrefix(file, "s3://") {
			return "", "", fmt.Errorf("--task %s: want a local path, an http(s):// or an s3:// URL", file)
		}
		// Read by the worker; its name is the last path element's stem.
		base := file[strings.LastIndex(file, "/")+1:]
		name = strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
		return name, file, nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", "", fmt.Errorf("--task %s: %w", file, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", "", fmt.Errorf("--task: %w", err)
	}
	data, err := limits.ReadFile(f, file, taskfile.MaxFileBytes)
	f.Close()
	if err != nil {
		return "", "", fmt.Errorf("--task: %w", err)
	}
	if lmeval.Detect(data) {
		return "", "", fmt.Errorf("%s is an lm-evaluation-harness task: give its data with --data DATASET_PATH=DIR (it is written as a task file beside the data, then built), or convert it first (benchline task convert %s --data DATASET_PATH=DIR -o OUT.yaml)", file, file)
	}
	if promptfoo.Detect(data) {
		return "", "", fmt.Errorf("--task %s: a promptfoo config is built through its translation (dataset build --task writes it beside the config)", file)
	}
	c, err := taskfile.Load(file, data)
	if err != nil {
		return "", "", err
	}
	if _, err := registry.Default().Get(c.Spec.Name); err == nil {
		return "", "", fmt.Errorf("%s: name: %q is a built-in benchmark: give the task another name", file, c.Spec.Name)
	}
	return c.Spec.Name, abs, nil
}

// checkPromptfoo is task check on a promptfoo config: its samples are
// prompts x tests (ids p<prompt>-t<test>), and a given reply is graded with
// the test's assertions as promptfoo grades it: the metrics are pass (the
// pass rate, the headline) and score (promptfoo's weighted score).
func checkPromptfoo(file string, data []byte, rows int, repliesFile string) (checkReport, error) {
	cfg, err := promptfoo.Parse(file, data, promptfoo.DirReader(filepath.Dir(file)))
	if err != nil {
		return checkReport{}, err
	}
	samples, err := cfg.Samples()
	if err != nil {
		return checkReport{}, err
	}
	given := map[string]modelapi.Response{}
	if repliesFile != "" {
		if given, err = readReplies(repliesFile); err != nil {
			return checkReport{}, err
		}
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	rep := checkReport{Task: name, Metrics: []string{"pass", "score"}, Means: map[string]float64{}}
	var prov promptfoo.Provider
	if len(cfg.Providers) > 0 {
		prov = cfg.Providers[0]
	}
	for i, s := range samples {
		reply, has := given[s.ID]
		if i >= rows && !has {
			continue
		}
		cs := checkSample{ID: s.ID}
		for _, m := range s.Messages {
			cs.Messages = append(cs.Messages, map[string]string{"role": m.Role, "content": m.Content})
		}
		if has {
			out := promptfoo.Output{}
			if len(reply.Choices) > 0 {
				out = promptfoo.OutputOf(reply.Choices[0].Content, reply.Choices[0].ToolCalls)
			}
			shown := taskfile.Shown(reply)
			cs.Reply = &shown
			delete(given, s.ID)
			if cfg.Tests[s.Test].Judged() {
				cs.Verdicts = append(cs.Verdicts, taskfile.Verdict{Metric: "pass", Why: notJudgedHere})
				rep.Samples = append(rep.Samples, cs)
				continue
			}
			res := promptfoo.Grade(cfg.Tests[s.Test], prov, s, out)
			pass := 0.0
			if res.Pass {
				pass = 1
			}
			cs.Verdicts = append(cs.Verdicts, taskfile.Verdict{Metric: "pass", Score: pass, Why: res.Reason},
				taskfile.Verdict{Metric: "score", Score: res.Score})
			for _, c := range res.Components {
				cs.Verdicts = append(cs.Verdicts, taskfile.Verdict{Metric: "assert " + c.Type, Score: c.Score, Why: c.Reason})
			}
			rep.Means["pass"] += pass
			rep.Means["score"] += res.Score
			rep.Scored++
		}
		rep.Samples = append(rep.Samples, cs)
	}
	if len(given) > 0 {
		ids := make([]string, 0, len(given))
		for id := range given {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return rep, fmt.Errorf("task check: %s: %d replies name no sample (p<prompt>-t<test>): %s", repliesFile, len(ids), strings.Join(ids[:min(len(ids), 5)], ", "))
	}
	for k := range rep.Means {
		rep.Means[k] /= float64(rep.Scored)
	}
	return rep, nil
}

// notJudgedHere is task check's verdict on a promptfoo test with a judged
// assertion (llm-rubric, model-graded-closedqa, factuality): it is left
// out of the means, as judged task files' scorers are.
const notJudgedHere = "not scored here: the test has a judged assertion, graded by the run's judges (benchline eval)"
