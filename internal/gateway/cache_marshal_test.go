package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// marshalRequests are requests of every kind the gateway sends: text,
// parts, tool calls and results, tools, tool choice, response formats,
// strings json.Marshal escapes, numbers it formats, empty and nil lists.
func marshalRequests() []openai.ChatCompletionRequest {
	seed := 42
	idx := 1
	return []openai.ChatCompletionRequest{
		{Model: "reference", Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "Answer only."}, {Role: "user", Content: "What is 1234 + 5678?"}},
			Temperature: 1.401298464324817e-45, MaxTokens: 256, Seed: &seed},
		{Model: `m "quoted" \\ "messages":null`, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "é 日本 \t\r\n\b\f \x00 \\ \" / <b>&</b> \u2028\u2029 \xff\xfe bad"}}},
		{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "hi"},
			{Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAA", Detail: "low"}}}}},
			TopP: 0.95, Stop: []string{"\n\n", "</s>"}, LogitBias: map[string]int{"b": 1, "a": -2}, N: 2, PresencePenalty: 1e-7, FrequencyPenalty: 1.5},
		{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x", MultiContent: []openai.ChatMessagePart{}}}},
		{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "assistant", Refusal: "no", ReasoningContent: "think", Name: "bot",
				ToolCalls: []openai.ToolCall{{Index: &idx, ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}},
			{Role: "assistant", FunctionCall: &openai.FunctionCall{Name: "g", Arguments: "{}"}},
			{Role: "tool", ToolCallID: "c1", Content: `{"r":2}`}},
			Tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "f", Description: "d",
				Parameters: json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}`)}},
				{Type: "function", Function: &openai.FunctionDefinition{Name: "g", Strict: true, Parameters: jsonschema.Definition{Type: jsonschema.Object,
					Properties: map[string]jsonschema.Definition{"y": {Type: jsonschema.String}}, Required: []string{"y"}}}}},
			ToolChoice: map[string]any{"type": "function", "function": map[string]any{"name": "f"}},
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "s", Schema: json.RawMessage(`{"b":1,"a":[1.0,2e30]}`), Strict: true}}},
		{Model: "m", Messages: []openai.ChatCompletionMessage{}, ReasoningEffort: "low", Metadata: map[string]string{"z": "1", "a": "2"}},
		{Model: "m"},
	}
}

// marshalRequest writes every request exactly as json.Marshal does, or
// fails as it does (a message with both text and parts).
func TestMarshalRequest(t *testing.T) {
	reqs := append(marshalRequests(), openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "y"}}}}})
	for i, req := range reqs {
		want, werr := json.Marshal(req)
		got, gerr := marshalRequest(req)
		if (werr == nil) != (gerr == nil) || string(got) != string(want) {
			t.Errorf("request %d:\n got %s (%v)\nwant %s (%v)", i, got, gerr, want, werr)
		}
	}
}

// FuzzMarshalRequest: marshalRequest equals json.Marshal on arbitrary
// strings in every text field of a message and in the model.
func FuzzMarshalRequest(f *testing.F) {
	f.Add("reference", "user", "What is 2+2?", "", "", "", 0.0)
	f.Add(`m"messages":null`, "assistant", "<&>\u2028", "name", "think", "call-1", 0.7)
	f.Add("", "", "\xff", "\x00", "\\", "\"", 1e-7)
	f.Fuzz(func(t *testing.T, model, role, content, name, reasoning, toolCallID string, temp float64) {
		req := openai.ChatCompletionRequest{Model: model, Temperature: float32(temp), Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: reasoning}, {Role: role, Content: content, Name: name, ReasoningContent: reasoning, ToolCallID: toolCallID}}}
		want, werr := json.Marshal(req)
		got, gerr := marshalRequest(req)
		if (werr == nil) != (gerr == nil) || string(got) != string(want) {
			t.Fatalf("\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// BenchmarkMarshalRequest: a two-message request, as json.Marshal
// encodes it and as marshalRequest does, and its whole cache key.
func BenchmarkMarshalRequest(b *testing.B) {
	req := marshalRequests()[0]
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshalRequest", func(b *testing.B) {
		for b.Loop() {
			if _, err := marshalRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cacheKey", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := cacheKey("baseline", req, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The cache key of a request is what it was when it hashed json.Marshal's
// bytes behind a header written with fmt: existing caches stay valid.
func TestCacheKeyUnchanged(t *testing.T) {
	for i, req := range marshalRequests() {
		got, err := CacheKey("baseline", req, 3)
		if _, merr := json.Marshal(req); (err == nil) != (merr == nil) {
			t.Fatalf("request %d: CacheKey error %v, json.Marshal error %v", i, err, merr)
		} else if err != nil {
			continue // text and parts in one message: an error both ways
		}
		// The key as it was computed before marshalRequest (free-form values
		// re-encoded with sorted keys first, as CacheKey does).
		canon, _, err := cacheKey("baseline", req, 3)
		if err != nil || canon != got {
			t.Fatalf("request %d: CacheKey and cacheKey differ", i)
		}
		if req.Tools != nil || req.ToolChoice != nil || req.ResponseFormat != nil {
			continue // re-encoded: compared through TestCacheKeyCanonical
		}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		fmt.Fprintf(h, "benchline-cache-v1\x00%s\x00%d\x00", "baseline", 3)
		h.Write(body)
		if want := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("request %d: key %s, want %s", i, got, want)
		}
	}
}
