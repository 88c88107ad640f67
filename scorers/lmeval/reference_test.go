package lmeval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchline/benchline/scorers/taskfile"
)

// python is the interpreter with Debian's python3-jinja2 and python3-yaml
// (make setup installs them): /usr/bin/python3 when there, else python3.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("python3 is missing: make setup installs it with python3-jinja2 and python3-yaml")
	return ""
}

type refCase struct {
	Doc     map[string]any `json:"doc"`
	Replies []string       `json:"replies"`
}

type refResult struct {
	Prompt      string              `json:"prompt"`
	Description string              `json:"description"`
	Targets     []string            `json:"targets"`
	Scores      map[string]float64  `json:"scores"`
	Messages    []map[string]string `json:"messages"`
	// Params are the generation settings of lm-eval's chat request.
	Params map[string]any `json:"params"`
}

// notSent are the keys lm-eval's chat request carries that benchline's
// does not: max_new_tokens, an extra body key OpenAI-compatible servers
// ignore (lm-eval's max_tokens does not read it).
var notSent = []string{"max_new_tokens"}

// requestParams are the generation settings the translated task file asks
// with, keyed as lm-eval's request body keys them.
func requestParams(g taskfile.Generation) map[string]any {
	out := map[string]any{"max_tokens": float64(g.MaxTokens), "temperature": 0.0, "stop": []any{}}
	if g.Temperature != nil {
		out["temperature"] = *g.Temperature
	}
	stop := []any{}
	for _, s := range g.Stop {
		stop = append(stop, s)
	}
	out["stop"] = stop
	if g.TopP != nil {
		out["top_p"] = *g.TopP
	}
	return out
}

func readCases(t *testing.T, file string) []refCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []refCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var c refCase
		if err := dec.Decode(&c); err != nil {
			t.Fatal(err)
		}
		c.Doc = taskfile.PlainNumbers(c.Doc).(map[string]any) // as the data reader gives rows
		out = append(out, c)
	}
	return out
}

func readOS(p string) ([]byte, error) { return os.ReadFile(p) }

// TestSameAsLMEval holds benchline's rendered prompts, targets and every
// per-sample "metric,filter" score equal to testdata/reference.py's, a
// Python reference that follows lm-eval's template, filter and metric code
// step by step with real Jinja2, on every row of the test tasks.
func TestSameAsLMEval(t *testing.T) {
	tasks := []string{"gsm8k", "gsm8k-exprs", "gsm8k-cot", "gsm8k-cot-zeroshot", "triviaqa", "boolq-seq2seq", "anagrams1", "babi", "gsm8k-cot-self-consistency", "gsm8k-5shot", "gsm8k-first-n", "gsm8k-platinum", "gsm8k-val-first-n", "gsm8k-val-train", "gsm8k-sampling", "arc-challenge-chat", "gsm8k-cot-prefix", "mmlu-llama", "gsm8k-5shot-prefix", "kmmlu-cot-hard", "mmlu-flan-cot"}
	type input struct {
		Task    string           `json:"task"`
		Rows    []map[string]any `json:"rows"`
		Replies [][]string       `json:"replies"`
		// FewshotRows are the few-shot split's rows, in order.
		FewshotRows []map[string]any `json:"fewshot_rows,omitempty"`
	}
	var req struct {
		Cases []input `json:"cases"`
	}
	all := map[string][]refCase{}
	pools := map[string][]taskfile.Row{}
	for _, name := range tasks {
		cs := readCases(t, filepath.Join("testdata", "cases", name+".jsonl"))
		all[name] = cs
		in := input{Task: filepath.Join("testdata", "tasks", name+".yaml")}
		shotRows := cs
		if train := filepath.Join("testdata", "cases", name+".train.jsonl"); fileExists(train) {
			shotRows = readCases(t, train)
		} else if task, err := Check(in.Task, readOS); err != nil || task.SplitShots == nil || task.SplitShots.Split != task.EvalSplit {
			shotRows = nil // no examples from a split, or from one with no file here
		}
		// Without a .train.jsonl file, the examples come from the
		// evaluated split: its rows are the pool.
		for i, c := range shotRows {
			in.FewshotRows = append(in.FewshotRows, c.Doc)
			pools[name] = append(pools[name], taskfile.Row{ID: fmt.Sprint(i), Fields: c.Doc})
		}
		for _, c := range cs {
			in.Rows = append(in.Rows, c.Doc)
			in.Replies = append(in.Replies, c.Replies)
		}
		req.Cases = append(req.Cases, in)
	}
	body, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python(t), filepath.Join("testdata", "reference.py"))
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.py: %v\n%s", err, stderr.String())
	}
	var want [][]refResult
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	render := func(src string, fields map[string]any) (string, error) {
		tm, err := taskfile.CompileTemplate(src)
		if err != nil {
			return "", err
		}
		return tm.Render(fields)
	}
	for i, name := range tasks {
		task, err := Check(filepath.Join("testdata", "tasks", name+".yaml"), readOS)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		file := filepath.Join("testdata", "tasks", name+".yaml")
		raw, err := Translate(file, readOS, map[string]string{task.DatasetPath: "/data/x.jsonl"}, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compiled, err := taskfile.Load(file, raw)
		if err != nil {
			t.Fatalf("%s: the translated task file: %v\n%s", name, err, raw)
		}
		if (task.SplitShots != nil) != (pools[name] != nil) {
			t.Fatalf("%s: examples from a split %v, a train file %v", name, task.SplitShots != nil, pools[name] != nil)
		}
		draw := compiled.ShotDrawer(pools[name])
		if n := compiled.Spec.Generation.N(); n != task.Repeats {
			t.Errorf("%s: the task file asks each row %d times, lm-eval's repeats is %d", name, n, task.Repeats)
		}
		for j, c := range all[name] {
			w := want[i][j]
			sent := maps.Clone(w.Params)
			for _, k := range notSent {
				delete(sent, k)
			}
			if got := requestParams(compiled.Spec.Generation); !reflect.DeepEqual(got, sent) {
				t.Errorf("%s row %d: the task file asks with %v, lm-eval's chat request with %v", name, j+1, got, w.Params)
			}
			// The translated task file scores the sample's replies as the
			// worker does (generation.repeats' list of replies).
			replies := make([]taskfile.Reply, len(c.Replies))
			for k, text := range c.Replies {
				replies[k] = taskfile.Reply{Text: text}
			}
			tfScores, _, _ := compiled.ScoreReplies(taskfile.Row{ID: "r", Fields: c.Doc}, replies)
			for key, ref := range w.Scores {
				if got, ok := tfScores[key]; !ok || got != ref {
					t.Errorf("%s row %d: the task file's %s = %v (%v), lm-eval's %v; replies %q", name, j+1, key, got, ok, ref, c.Replies)
				}
			}
			shots, err := draw(taskfile.Row{ID: "r", Fields: c.Doc})
			if err != nil {
				t.Fatalf("%s row %d: %v", name, j+1, err)
			}
			msgs, err := compiled.Messages(taskfile.Row{ID: "r", Fields: c.Doc}, shots)
			if err != nil {
				t.Errorf("%s row %d: %v", name, j+1, err)
			}
			var chat []map[string]string
			for _, m := range msgs {
				chat = append(chat, map[string]string{"role": m.Role, "content": m.Content})
			}
			if gj, wj := fmt.Sprint(chat), fmt.Sprint(w.Messages); gj != wj {
				t.Errorf("%s row %d: the chat sent\n%q\nlm-eval's under --apply_chat_template\n%q", name, j+1, chat, w.Messages)
			}
			prompt := task.DocToText
			if identifier(prompt) {
				prompt = "{{ __row__['" + prompt + "'] }}"
			}
			got, err := render(prompt, c.Doc)
			if err != nil || got != w.Prompt {
				t.Errorf("%s row %d: prompt %q (%v), Jinja2 renders %q", name, j+1, got, err, w.Prompt)
			}
			if task.Description != "" {
				if got, err := render(task.Description, c.Doc); err != nil || got != w.Description {
					t.Errorf("%s row %d: description %q (%v), Jinja2 renders %q", name, j+1, got, err, w.Description)
				}
			}
			n := 0
			for _, p := range task.Pipelines {
				for _, m := range task.Metrics {
					key := m.Name + "," + p.Name
					score, pred, gold, err := task.ScoreOne(p, m, c.Replies, c.Doc, render)
					if err != nil {
						t.Errorf("%s row %d: %s: %v", name, j+1, key, err)
						continue
					}
					if strings.Join(gold, "\x00") != strings.Join(w.Targets, "\x00") {
						t.Errorf("%s row %d: targets %q, lm-eval's %q", name, j+1, gold, w.Targets)
					}
					ref, ok := w.Scores[key]
					if !ok {
						t.Errorf("%s row %d: benchline's metric %s is not lm-eval's (%v)", name, j+1, key, w.Scores)
					}
					if score != ref {
						t.Errorf("%s row %d: %s = %v (answer %q), lm-eval's %v; replies %q", name, j+1, key, score, pred, ref, c.Replies)
					}
					n++
				}
			}
			if n != len(w.Scores) {
				t.Errorf("%s row %d: %d metrics, lm-eval's %d (%v)", name, j+1, n, len(w.Scores), w.Scores)
			}
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
