package gateway

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

// encoderLine is what json.Encoder writes for e: the cache's format.
func encoderLine(e Entry) (string, error) {
	var b bytes.Buffer
	err := json.NewEncoder(&b).Encode(e)
	return b.String(), err
}

// TestAppendEntry: appendEntry writes the bytes json.Encoder writes, for
// the entries it writes itself and for those it hands to json.Marshal.
func TestAppendEntry(t *testing.T) {
	at := time.Date(2026, 11, 27, 18, 30, 1, 123456789, time.UTC)
	east := time.FixedZone("east", 5*3600+30*60)
	usage := modelapi.Usage{PromptTokens: 86, CompletionTokens: 2, CostUSD: 0.000172, Latency: 1500 * time.Millisecond, Attempts: 1}
	for _, tc := range []struct {
		name  string
		e     Entry
		plain bool // written by appendEntry itself
	}{
		{"answer", Entry{Key: strings.Repeat("ab", 32), Created: at, Response: modelapi.Response{ID: "chatcmpl-1", Model: "reference",
			Choices: []modelapi.Choice{{Content: "The answer is 6912.", FinishReason: "stop"}}, Usage: usage}}, true},
		{"zero response", Entry{Key: "k", Created: at}, true},
		{"no id or model", Entry{Key: "k", Created: at, Response: modelapi.Response{Choices: []modelapi.Choice{{Content: "x"}}}}, true},
		{"empty choices", Entry{Key: "k", Created: at, Response: modelapi.Response{Choices: []modelapi.Choice{}}}, true},
		{"nil choices, usage", Entry{Key: "k", Created: at, Response: modelapi.Response{Usage: modelapi.Usage{CacheHit: true}}}, true},
		{"empty choice", Entry{Key: "k", Created: at, Response: modelapi.Response{Choices: []modelapi.Choice{{}, {FinishReason: "length"}}}}, true},
		{"every text field", Entry{Key: "k", Created: at, Response: modelapi.Response{ID: "i", Model: "m", Choices: []modelapi.Choice{
			{Content: "c", Refusal: "r", ReasoningContent: "think", FinishReason: "stop"}, {Refusal: "no"}}}}, true},
		{"escapes", Entry{Key: "k<&>", Created: at, Response: modelapi.Response{ID: "\x00\x1f\x7f", Model: "\"m\\",
			Choices: []modelapi.Choice{{Content: "<b>&amp;</b> \u2028\u2029 \b\f\n\r\t é 日本 \xff\xfe bad \xe2\x80 cut 🙂", ReasoningContent: "\u00a0"}}}}, true},
		{"local zone", Entry{Key: "k", Created: at.In(east)}, true},
		{"no fraction", Entry{Key: "k", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, true},
		{"costs", Entry{Key: "k", Created: at, Response: modelapi.Response{Usage: modelapi.Usage{CostUSD: 1e-7, PromptTokens: -1, Latency: -1}}}, true},
		{"large cost", Entry{Key: "k", Created: at, Response: modelapi.Response{Usage: modelapi.Usage{CostUSD: 1e21}}}, true},
		{"negative cost", Entry{Key: "k", Created: at, Response: modelapi.Response{Usage: modelapi.Usage{CostUSD: -2.5e-300}}}, true},
		{"cost 1e-6", Entry{Key: "k", Created: at, Response: modelapi.Response{Usage: modelapi.Usage{CostUSD: 1e-6}}}, true},
		{"tool calls", Entry{Key: "k", Created: at, Response: modelapi.Response{Choices: []modelapi.Choice{{ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}}}}}, false},
		{"empty tool calls", Entry{Key: "k", Created: at, Response: modelapi.Response{Choices: []modelapi.Choice{{ToolCalls: []openai.ToolCall{}}}}}, false},
		{"reward", Entry{Key: "k", Created: at, Reward: &modelapi.RewardResponse{Model: "rm", Score: -1.25, Usage: modelapi.Usage{PromptTokens: 9}}}, false},
		{"zero time", Entry{Key: "k"}, true},
		{"year 10000", Entry{Key: "k", Created: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"offset with seconds", Entry{Key: "k", Created: at.In(time.FixedZone("lmt", 3600+17))}, false},
		{"NaN cost", Entry{Key: "k", Created: at, Response: modelapi.Response{Usage: modelapi.Usage{CostUSD: math.NaN()}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plainEntry(&tc.e); got != tc.plain {
				t.Errorf("plainEntry = %v, want %v", got, tc.plain)
			}
			want, werr := encoderLine(tc.e)
			got, gerr := appendEntry([]byte("prefix"), &tc.e)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("appendEntry error %v, json.Encoder's %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			if string(got) != "prefix"+want {
				t.Errorf("\n got %s\nwant %s", got, "prefix"+want)
			}
		})
	}
}

// FuzzAppendEntry: appendEntry writes what json.Encoder writes for any
// strings, numbers and time.
func FuzzAppendEntry(f *testing.F) {
	f.Add("key", "id", "model", "content", "stop", "", 86, 0.000172, int64(1500000000), int64(1764268201), 0, false)
	f.Add("<&>", "\u2028", "\xff", "\x00\x1f", "\"\\", "think", -1, 1e-9, int64(-1), int64(0), 19800, true)
	f.Add("", "", "", "", "", "", 0, 3e21, int64(0), int64(-62135596800), -3600, false)
	f.Fuzz(func(t *testing.T, key, id, model, content, finish, reasoning string, tokens int, cost float64, latency, unix int64, offset int, hit bool) {
		e := Entry{Key: key, Created: time.Unix(unix, latency%1e9).In(time.FixedZone("z", offset%(24*3600))),
			Response: modelapi.Response{ID: id, Model: model, Choices: []modelapi.Choice{{Content: content, FinishReason: finish, ReasoningContent: reasoning}},
				Usage: modelapi.Usage{PromptTokens: tokens, CompletionTokens: tokens / 3, CostUSD: cost, Latency: time.Duration(latency), Attempts: tokens % 7, CacheHit: hit}}}
		if tokens%5 == 0 {
			e.Response.Choices = nil
		}
		want, werr := encoderLine(e)
		got, gerr := appendEntry(nil, &e)
		if (werr == nil) != (gerr == nil) || werr == nil && string(got) != want {
			t.Fatalf("\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
		}
	})
}

// TestAppendEntryFields fails when a field is added to a type appendEntry
// writes by hand: it would leave the field out of the cache. Add the field
// to appendEntry (or to plainEntry's exceptions), then to this list.
func TestAppendEntryFields(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{Entry{}, "Key Created Response Reward"},
		{modelapi.Response{}, "ID Model Choices Usage"},
		{modelapi.Choice{}, "Content ToolCalls Refusal ReasoningContent FinishReason"},
		{modelapi.Usage{}, "PromptTokens CompletionTokens CostUSD Latency Attempts CacheHit"},
	} {
		typ := reflect.TypeOf(tc.v)
		var names []string
		for i := range typ.NumField() {
			names = append(names, typ.Field(i).Name)
		}
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s has fields %q; appendEntry writes %q", typ, got, tc.want)
		}
	}
}

// BenchmarkAppendEntry: an answer's cache line by json.Encoder and by
// appendEntry.
func BenchmarkAppendEntry(b *testing.B) {
	e := Entry{Key: strings.Repeat("3f", 32), Created: time.Now().UTC(), Response: modelapi.Response{ID: "chatcmpl-1", Model: "reference",
		Choices: []modelapi.Choice{{Content: "The answer is 6912.", FinishReason: "stop"}}, Usage: modelapi.Usage{PromptTokens: 86, CompletionTokens: 2, Attempts: 1}}}
	b.Run("json.Encoder", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendEntry", func(b *testing.B) {
		buf := make([]byte, 0, 512)
		for b.Loop() {
			var err error
			if buf, err = appendEntry(buf[:0], &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
