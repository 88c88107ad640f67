package modelapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/golden"
)

var update = flag.Bool("update", false, "update golden files")

// TestJSONEncoding pins the JSON of every type: recorded workflow histories,
// run plans (whose run id hashes Params), cached answers and result rows
// hold it, so a renamed field or tag breaks replays and cache hits.
func TestJSONEncoding(t *testing.T) {
	temp, seed := float32(0.7), 42
	usage := Usage{PromptTokens: 10, CompletionTokens: 5, CostUSD: 0.25, Latency: 1500 * time.Millisecond, Attempts: 2, CacheHit: true}
	call := openai.ToolCall{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f", Arguments: `{"x":1}`}}
	values := []struct {
		name string
		v    any
		into func() any
	}{
		{"Params", Params{Temperature: &temp, TopP: 0.9, MaxTokens: 64, Stop: []string{"\n"}, PresencePenalty: 0.1,
			FrequencyPenalty: 0.2, N: 2, ReasoningEffort: "low", ToolChoice: "auto",
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}},
			func() any { return new(Params) }},
		{"Request", Request{Model: "baseline/reference", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
			Tools:  []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f"}}},
			Params: Params{MaxTokens: 8}, Seed: &seed, SampleIndex: 3, NoCache: true, Oracle: `{"verdicts":[]}`},
			func() any { return new(Request) }},
		{"Response", Response{ID: "c1", Model: "reference", Choices: []Choice{{Content: "hello", ToolCalls: []openai.ToolCall{call},
			Refusal: "no", ReasoningContent: "because", FinishReason: "stop"}}, Usage: usage},
			func() any { return new(Response) }},
		{"Totals", Totals{Calls: 3, CacheHits: 1, Attempts: 4, PromptTokens: 30, CompletionTokens: 15, CostUSD: 0.75,
			SpentUSD: 0.5, Latency: 4 * time.Second},
			func() any { return new(Totals) }},
		{"RewardRequest", RewardRequest{Model: "baseline/reward-reference", Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}}, NoCache: true},
			func() any { return new(RewardRequest) }},
		{"RewardResponse", RewardResponse{ID: "p1", Model: "rm", Score: -1.5, Usage: usage},
			func() any { return new(RewardResponse) }},
		{"ModelKind", []ModelKind{ModelChat, ModelReward},
			func() any { return new([]ModelKind) }},
	}
	var out bytes.Buffer
	for _, tc := range values {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			require.NoError(t, err)
			// Decoding and encoding again gives the same bytes.
			into := tc.into()
			require.NoError(t, json.Unmarshal(b, into))
			again, err := json.Marshal(into)
			require.NoError(t, err)
			assert.JSONEq(t, string(b), string(again))
			out.WriteString(tc.name + " " + string(b) + "\n")
		})
	}
	path := filepath.Join("testdata", "encoding.golden")
	golden.Check(t, path, out.String(), *update, "")
}

func TestTotals(t *testing.T) {
	tests := []struct {
		name  string
		usage []Usage
		want  Totals
	}{
		{"none", nil, Totals{}},
		{"a paid call", []Usage{{PromptTokens: 10, CompletionTokens: 2, CostUSD: 0.5, Latency: time.Second, Attempts: 2}},
			Totals{Calls: 1, Attempts: 2, PromptTokens: 10, CompletionTokens: 2, CostUSD: 0.5, SpentUSD: 0.5, Latency: time.Second}},
		{"a cache hit costs the answer, spends nothing", []Usage{{PromptTokens: 10, CostUSD: 0.5, Latency: time.Second, CacheHit: true}},
			Totals{Calls: 1, CacheHits: 1, PromptTokens: 10, CostUSD: 0.5, Latency: time.Second}},
		{"paid and hit", []Usage{{CostUSD: 1, Attempts: 1}, {CostUSD: 2, CacheHit: true}},
			Totals{Calls: 2, CacheHits: 1, Attempts: 1, CostUSD: 3, SpentUSD: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Totals
			for _, u := range tc.usage {
				got.Add(u)
			}
			assert.Equal(t, tc.want, got)
			// Merging per-call totals gives the same sum as adding the calls.
			var merged Totals
			for _, u := range tc.usage {
				var one Totals
				one.Add(u)
				merged.Merge(one)
			}
			assert.Equal(t, tc.want, merged)
		})
	}
}

func TestResponseText(t *testing.T) {
	assert.Empty(t, Response{}.Text())
	assert.Equal(t, "first", Response{Choices: []Choice{{Content: "first"}, {Content: "second"}}}.Text())
}
