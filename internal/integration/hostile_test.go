package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/wfclient"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/bfcl"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/workflows"
)

// hostileModel is a model endpoint on loopback that answers every chat
// completion with the body set last, and a worker process calling it as
// the "baseline" provider on its own task queue.
type hostileModel struct {
	once    sync.Once
	body    atomic.Pointer[[]byte]
	queue   string
	dataset string // a two-item BFCL version
	worker  *procWorker
}

// start starts the endpoint and the worker (once, for the parent test)
// and builds the dataset the cases evaluate.
func (m *hostileModel) start(parent *testing.T, h *badHarness) {
	m.once.Do(func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(*m.body.Load())
		}))
		parent.Cleanup(srv.Close)
		m.queue = "badinput-replies"
		m.worker = startProcWorker(parent, h.binary(parent), workerEnv(m.queue, srv.URL+"/v1"), "worker", "--queues", "main")
		q, a := bfclLines(parent, 2)
		res, err := buildVia(parent, bfcl.Name, datasets.Request{Source: bfclDir(parent, strings.Join(q, ""), a)})
		if err != nil {
			parent.Fatal(err)
		}
		m.dataset = bfcl.Name + "@" + res.Version
	})
}

// chatBody is a chat completion whose message is msg (a JSON object).
func chatBody(msg string) []byte {
	return []byte(`{"id": "hostile", "object": "chat.completion", "created": 0, "model": "reference", "choices": [{"index": 0, "message": ` +
		msg + `, "finish_reason": "stop"}], "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}`)
}

// contentMsg is an assistant message holding content.
func contentMsg(content string) string {
	b, _ := json.Marshal(map[string]string{"role": "assistant", "content": content})
	return string(b)
}

// rawJSONString encodes b as a JSON string literal byte for byte: control
// characters escaped, every other byte (invalid UTF-8 included) raw.
func rawJSONString(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&sb, `\u%04x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// hostileReplies are the model replies of the corpus: each is served to
// every sample of a two-item BFCL dataset.
func hostileReplies(t *testing.T) []struct {
	name string
	body func() []byte
} {
	injection, err := os.ReadFile(filepath.Join(badInputDir, "replies", "prompt-injection.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	return []struct {
		name string
		body func() []byte
	}{
		{"huge", func() []byte {
			return chatBody(contentMsg("[finance.compound_interest(principal='" + strings.Repeat("9", 32<<20) + "')]"))
		}},
		{"binary", func() []byte {
			return chatBody(`{"role": "assistant", "content": ` + rawJSONString(append([]byte("\x00\xff\xfe\xc0\x80"), randomBytes(7, 4096)...)) + `}`)
		}},
		{"not-json", func() []byte { return randomBytes(8, 8192) }},
		{"nested-content", func() []byte { return chatBody(contentMsg(strings.Repeat("[", 1<<20))) }},
		{"nested-arguments", func() []byte {
			return chatBody(`{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "finance.compound_interest", "arguments": ` +
				rawJSONString([]byte(`{"principal": `+deep(200_000)+`}`)) + `}}]}`)
		}},
		{"nested-body", func() []byte {
			b := chatBody(contentMsg("[f(a=1)]"))
			return append(b[:len(b)-1], []byte(`, "extra": `+deep(1_000_000)+`}`)...)
		}},
		{"prompt-injection", func() []byte { return chatBody(contentMsg(string(injection))) }},
	}
}

// replyAction evaluates the two-item dataset against the hostile endpoint
// serving body. A reply the run takes in its stride gives each sample a
// row that is not correct, naming why: the action returns those reasons
// as its error ("sample <id>: ..."), or nil when a sample was scored as
// correct; a run that fails instead returns the run's error.
func replyAction(t *testing.T, h *badHarness, seed int, body []byte) func(context.Context) error {
	m := h.replies
	m.start(h.parent, h)
	m.body.Store(&body)
	return func(ctx context.Context) error {
		cfg := stack.Stack.Config
		cfg.Temporal.TaskQueue = m.queue
		in := workflows.EvaluateModelInput{Request: runs.Request{Dataset: m.dataset, Model: "baseline/reference", Seed: &seed}}
		run, plan, err := wfclient.StartEval(ctx, stack.Client, cfg, stack.Store, in)
		if err != nil {
			return err
		}
		terminateOnCleanup(t, wfclient.EvalWorkflowID(plan.RunID))
		if _, err := wfclient.WaitEval(ctx, stack.Client, run, plan.RunID, time.Hour, nil); err != nil {
			if m.worker.Exited() {
				return fmt.Errorf("the worker died: %w", err)
			}
			return err
		}
		_, rows := resultRows(ctx, t, plan.RunID)
		if int64(len(rows)) != plan.Samples {
			t.Errorf("%d result rows for %d samples", len(rows), plan.Samples)
		}
		var why []string
		for _, r := range rows {
			if r.Metrics["accuracy"] != 0 {
				t.Errorf("sample %s scored %v on a hostile reply", r.SampleID, r.Metrics["accuracy"])
				return nil
			}
			reason := r.ErrorClass + ": " + r.ErrorMessage
			if r.ErrorClass == "" {
				reason = "wrong: " + r.DetailsJSON
			}
			why = append(why, fmt.Sprintf("sample %s: %s", r.SampleID, excerpt(reason, 60)))
		}
		if m.worker.Exited() {
			t.Error("the worker died")
		}
		return fmt.Errorf("%s", strings.Join(why, "; "))
	}
}

// replyCases turns the hostile replies into cases of the corpus.
func replyCases(t *testing.T) []badInput {
	var out []badInput
	for i, r := range hostileReplies(t) {
		out = append(out, badInput{name: "reply/" + r.name, timeout: 3 * time.Minute,
			prepare: func(t *testing.T, h *badHarness) func(context.Context) error {
				return replyAction(t, h, 1000+i, r.body())
			},
			want: func(*badHarness) []string {
				if r.name == "huge" { // 32 MiB: past limits.max_reply_bytes (1 MiB)
					return []string{"sample simple_python_0: reply-too-large", "sample simple_python_1: reply-too-large"}
				}
				return []string{"sample simple_python_0", "sample simple_python_1"}
			}})
	}
	return out
}
