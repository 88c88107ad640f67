package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/refkey"
	"github.com/benchline/benchline/internal/runs"
	"github.com/benchline/benchline/scorers"
)

func userMsgs(text string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}
}

var weatherTools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}

func TestReferenceLines(t *testing.T) {
	call := []scorers.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}
	th := refkey.ToolsHash(weatherTools)
	for _, tc := range []struct {
		name string
		ref  scorers.Reference
		keys []string
	}{
		{"chat", scorers.Reference{Messages: userMsgs("What is 2+2?"), Content: "4"},
			[]string{refkey.Conversation(userMsgs("What is 2+2?"))}},
		{"tools: the key with the tools first, then the conversation's",
			scorers.Reference{Messages: userMsgs("Weather in Paris?"), ToolsHash: th, ToolCalls: call},
			[]string{refkey.WithTools(userMsgs("Weather in Paris?"), th), refkey.Conversation(userMsgs("Weather in Paris?"))}},
		{"reward: only the reward key", scorers.Reference{Messages: userMsgs("Which is better?"), Reward: true, Content: "B"},
			[]string{refkey.Reward(userMsgs("Which is better?"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := ReferenceLines(tc.ref)
			if len(lines) != len(tc.keys) {
				t.Fatalf("%d lines, want %d", len(lines), len(tc.keys))
			}
			for i, l := range lines {
				if l.Key != tc.keys[i] {
					t.Errorf("line %d key %s, want %s", i, l.Key, tc.keys[i])
				}
				if l.Reference.Content != tc.ref.Content || len(l.Reference.ToolCalls) != len(tc.ref.ToolCalls) {
					t.Errorf("line %d answer %+v, want the reference's", i, l.Reference)
				}
			}
		})
	}
}

// TestReferenceLinesServed is the round trip: lines written as
// writeReferences writes them, loaded by the baseline server's loader,
// make baseline/reference answer the conversations they came from, over
// HTTP, with and without the tools; a reward reference answers no chat.
func TestReferenceLinesServed(t *testing.T) {
	ctx := context.Background()
	call := []scorers.ToolCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}
	refs := []scorers.Reference{
		{Messages: userMsgs("What is 2+2?"), Content: "4"},
		{Messages: userMsgs("Weather in Paris?"), ToolsHash: refkey.ToolsHash(weatherTools), ToolCalls: call},
		{Messages: userMsgs("Which is better?"), Reward: true, Content: "B"},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range refs {
		for _, l := range ReferenceLines(r) {
			if err := enc.Encode(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	mem, err := baseline.LoadJSONL(&buf)
	if err != nil {
		t.Fatalf("the baseline loader refuses the engine's lines: %v", err)
	}
	if _, ok := mem.Lookup(refkey.Reward(userMsgs("Which is better?"))); !ok {
		t.Error("the reward reference is not under its reward key")
	}
	srv, err := baseline.New(baseline.Options{References: mem})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = hs.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)
	ask := func(text string, tools []openai.Tool) openai.ChatCompletionMessage {
		t.Helper()
		res, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "baseline/reference", Messages: userMsgs(text), Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Message
	}
	if got := ask("What is 2+2?", nil); got.Content != "4" {
		t.Errorf("chat answer %q, want 4", got.Content)
	}
	for _, tools := range [][]openai.Tool{weatherTools, nil} {
		got := ask("Weather in Paris?", tools)
		if len(got.ToolCalls) != 1 || got.ToolCalls[0].Function.Name != "get_weather" {
			t.Errorf("with %d tools: answer %+v, want the get_weather call", len(tools), got)
		}
	}
	if got := ask("Which is better?", nil); got.Content == "B" {
		t.Error("a reward reference answered a chat request")
	}
}

// badArgsTask is rowsTask whose reference for one sample has tool-call
// arguments that are not JSON.
type badArgsTask struct {
	rowsTask
	bad string
}

func (t badArgsTask) Reference(s scorers.Sample) (scorers.Reference, bool) {
	r, ok := t.rowsTask.Reference(s)
	if s.ID == t.bad {
		r.ToolCalls = []scorers.ToolCall{{Name: "f", Arguments: json.RawMessage(`{"x":`)}}
	}
	return r, ok
}

// TestWriteReferencesInOrder: the references file holds every sample's
// lines in sample order across batches and parts, as a sequential encoding
// writes them, although batches are encoded in parallel.
func TestWriteReferencesInOrder(t *testing.T) {
	defer func(n int) { referenceBatch = n }(referenceBatch)
	referenceBatch = 7 // 60 samples in two parts: 10 batches, one across the parts
	ctx := context.Background()
	store := blobtest.NewMemory()
	m := publishRows(t, store)
	task := rowsTask{}
	plan := NewPlan(runs.Request{Dataset: "d", Model: "baseline/reference"}, m, task, time.Unix(0, 0))
	a := &Eval{Store: store}
	if err := a.writeReferences(ctx, catalog.Checked(store, m), task, task, plan); err != nil {
		t.Fatal(err)
	}
	got, err := blob.GetBytes(ctx, store, ReferencesKey("d", "0001", task.Version()))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	for p := range 2 {
		for i := range 30 {
			s := scorers.Sample{ID: fmt.Sprintf("p%d-%02d", p, i)}
			r, _ := task.Reference(s)
			for _, l := range ReferenceLines(r) {
				if err := enc.Encode(l); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if string(got) != want.String() {
		t.Fatalf("references file:\n%s\nwant:\n%s", got, want.String())
	}
}

// TestWriteReferencesBadAnswer: an answer that does not encode fails the
// write naming its sample, whichever batch it is in, and leaves no file.
func TestWriteReferencesBadAnswer(t *testing.T) {
	defer func(n int) { referenceBatch = n }(referenceBatch)
	referenceBatch = 7
	ctx := context.Background()
	store := blobtest.NewMemory()
	m := publishRows(t, store)
	task := badArgsTask{bad: "p1-05"}
	plan := NewPlan(runs.Request{Dataset: "d", Model: "baseline/reference"}, m, task, time.Unix(0, 0))
	a := &Eval{Store: store}
	err := a.writeReferences(ctx, catalog.Checked(store, m), task, task, plan)
	if err == nil || !strings.Contains(err.Error(), "sample p1-05") {
		t.Fatalf("writeReferences = %v, want an error naming sample p1-05", err)
	}
	if ok, _ := blob.Exists(ctx, store, ReferencesKey("d", "0001", task.Version())); ok {
		t.Error("a references file was left")
	}
}
