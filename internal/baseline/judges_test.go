package baseline

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/modelapi"
)

func TestParseJudgeModels(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Model
		err  bool
	}{
		{"judge", Model{Kind: KindJudge}, false},
		{"baseline/judge-yes", Model{Kind: KindJudgeYes}, false},
		{"judge-noisy-0.2", Model{Kind: KindJudgeNoisy, P: 0.2}, false},
		{"judge-noisy-0", Model{Kind: KindJudgeNoisy}, false},
		{"baseline/judge-malformed-1", Model{Kind: KindJudgeMalformed, P: 1}, false},
		{"judge-noisy-1.1", Model{}, true},
		{"judge-malformed-x", Model{}, true},
		{"judge-no", Model{}, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseModel(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.True(t, got.IsJudge())
			again, err := ParseModel(got.ID())
			require.NoError(t, err)
			assert.Equal(t, got, again, "ID round-trips")
		})
	}
}

// booleans lists the booleans of a JSON document in path order.
func booleans(t *testing.T, doc string) map[string]bool {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
	out := map[string]bool{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case bool:
			out[path] = x
		case map[string]any:
			for k, e := range x {
				walk(e, join(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, join(path, fmt.Sprint(i)))
			}
		}
	}
	walk(v, "")
	return out
}

// bigOracle is a verdict document with n booleans, alternately true and
// false.
func bigOracle(n int) string {
	var b strings.Builder
	b.WriteString(`{"verdicts":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"r%d","met":%v,"reason":"why %d"}`, i, i%2 == 0, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestOracleTransforms(t *testing.T) {
	const oracle = `{"verdicts":[{"id":"r1","met":true,"reason":"found"},{"id":"r2","met":false,"reason":"missing","weight":1.50}]}`
	d := hashOf("a request")
	tests := []struct {
		name  string
		model Model
		check func(t *testing.T, got string)
	}{
		{"judge: verbatim", Model{Kind: KindJudge}, func(t *testing.T, got string) {
			assert.Equal(t, oracle, got)
		}},
		{"judge-yes: every boolean true, the rest kept", Model{Kind: KindJudgeYes}, func(t *testing.T, got string) {
			assert.Equal(t, map[string]bool{"verdicts.0.met": true, "verdicts.1.met": true}, booleans(t, got))
			assert.Contains(t, got, `"reason":"missing"`)
			assert.Contains(t, got, `"weight":1.50`, "numbers keep their text")
		}},
		{"judge-noisy-0: verbatim", Model{Kind: KindJudgeNoisy, P: 0}, func(t *testing.T, got string) {
			assert.Equal(t, oracle, got)
		}},
		{"judge-noisy-1: every boolean flipped", Model{Kind: KindJudgeNoisy, P: 1}, func(t *testing.T, got string) {
			assert.Equal(t, map[string]bool{"verdicts.0.met": false, "verdicts.1.met": true}, booleans(t, got))
		}},
		{"judge-malformed-0: verbatim", Model{Kind: KindJudgeMalformed, P: 0}, func(t *testing.T, got string) {
			assert.Equal(t, oracle, got)
		}},
		{"judge-malformed-1: never valid JSON", Model{Kind: KindJudgeMalformed, P: 1}, func(t *testing.T, got string) {
			assert.False(t, json.Valid([]byte(got)), got)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := oracleReply(tc.model, oracle, nil, d)
			tc.check(t, got)
			assert.Equal(t, got, oracleReply(tc.model, oracle, nil, d), "deterministic")
		})
	}

	t.Run("without an oracle: an error text with no JSON", func(t *testing.T) {
		for _, k := range []Kind{KindJudge, KindJudgeYes, KindJudgeNoisy, KindJudgeMalformed} {
			got := oracleReply(Model{Kind: k, P: 0.5}, "", nil, d)
			assert.Contains(t, got, "no oracle reply")
			assert.NotContains(t, got, "{")
		}
	})
	t.Run("not JSON: no booleans to change", func(t *testing.T) {
		for _, k := range []Kind{KindJudgeYes, KindJudgeNoisy} {
			assert.Equal(t, "<choice>1</choice>", oracleReply(Model{Kind: k, P: 1}, "<choice>1</choice>", nil, d))
		}
	})
}

func TestJudgeNoisyShare(t *testing.T) {
	const n, p = 2000, 0.3
	oracle := bigOracle(n)
	want := booleans(t, oracle)
	got := booleans(t, oracleReply(Model{Kind: KindJudgeNoisy, P: p}, oracle, nil, hashOf("x")))
	flipped := 0
	for path, b := range want {
		if got[path] != b {
			flipped++
		}
	}
	assert.InDelta(t, p, float64(flipped)/n, 0.04, "flipped %d of %d", flipped, n)
	other := booleans(t, oracleReply(Model{Kind: KindJudgeNoisy, P: p}, oracle, nil, hashOf("y")))
	assert.NotEqual(t, got, other, "another request, other flips")
}

func TestJudgeMalformedShare(t *testing.T) {
	const n, p = 2000, 0.2
	oracle := bigOracle(3)
	broken, truncated := 0, 0
	for i := range n {
		got := oracleReply(Model{Kind: KindJudgeMalformed, P: p}, oracle, nil, hashOf("request", i))
		switch {
		case got == oracle:
		case got == malformedProse:
			broken++
		default:
			require.True(t, strings.HasPrefix(oracle, got) && !json.Valid([]byte(got)), got)
			broken++
			truncated++
		}
	}
	assert.InDelta(t, p, float64(broken)/n, 0.03)
	assert.InDelta(t, 0.5, float64(truncated)/float64(broken), 0.1, "both kinds of breakage occur")
}

// TestJudgeOverHTTP checks the oracle header end to end: decoded, answered
// from, and refused when it is not base64.
func TestJudgeOverHTTP(t *testing.T) {
	_, _, hs := newTestServer(t, Options{})
	ctx := context.Background()
	const oracle = `{"verdicts":[{"id":"r1","met":false,"reason":"没有"}]}`
	send := func(model, header string, prompt ...string) (int, string) {
		t.Helper()
		msgs := user("Judge it.")
		if len(prompt) > 0 {
			msgs = user(prompt[0])
		}
		body, _ := json.Marshal(openai.ChatCompletionRequest{Model: model, Messages: msgs})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/v1/chat/completions", strings.NewReader(string(body)))
		require.NoError(t, err)
		if header != "" {
			req.Header.Set(modelapi.OracleHeader, header)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out openai.ChatCompletionResponse
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if len(out.Choices) == 0 {
			return resp.StatusCode, ""
		}
		return resp.StatusCode, out.Choices[0].Message.Content
	}
	enc := base64.StdEncoding.EncodeToString([]byte(oracle))
	status, got := send("judge", enc)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, oracle, got)
	status, got = send("judge-yes", enc)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]bool{"verdicts.0.met": true}, booleans(t, got))
	status, got = send("judge", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, NoOracleReply(Model{Kind: KindJudge}), got)
	status, _ = send("judge", "not base64!")
	assert.Equal(t, http.StatusBadRequest, status)
	// The other models ignore an oracle.
	status, got = send("reference", enc, "What is 2+2?")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "4", got)
}

// scaledSchema is a response format with numbers on scales: a 0–4 score,
// a list of -1/0/1 labels, and a number without a scale.
var scaledSchema = map[string]any{"type": "object", "properties": map[string]any{
	"score":      map[string]any{"type": "integer", "enum": []any{0.0, 1.0, 2.0, 3.0, 4.0}},
	"confidence": map[string]any{"type": "number"},
	"checks": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
		"is_factual": map[string]any{"type": "integer", "enum": []any{-1.0, 0.0, 1.0}},
	}}},
}}

// scaled reads the numbers of a document on scaledSchema.
func scaled(t *testing.T, doc string) (score int, labels []int, confidence float64) {
	t.Helper()
	var v struct {
		Score      int     `json:"score"`
		Confidence float64 `json:"confidence"`
		Checks     []struct {
			IsFactual int `json:"is_factual"`
		} `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
	for _, c := range v.Checks {
		labels = append(labels, c.IsFactual)
	}
	return v.Score, labels, v.Confidence
}

func TestOracleScaledNumbers(t *testing.T) {
	const oracle = `{"score":1,"confidence":90,"checks":[{"is_factual":-1},{"is_factual":0},{"is_factual":1}]}`
	d := hashOf("a request")
	t.Run("judge-yes: the top of every scale", func(t *testing.T) {
		s, l, c := scaled(t, oracleReply(Model{Kind: KindJudgeYes}, oracle, scaledSchema, d))
		assert.Equal(t, 4, s)
		assert.Equal(t, []int{1, 1, 1}, l)
		assert.Equal(t, 90.0, c, "a number without a scale is kept")
	})
	t.Run("judge-noisy-1: every scaled number moves to another value of its scale", func(t *testing.T) {
		s, l, c := scaled(t, oracleReply(Model{Kind: KindJudgeNoisy, P: 1}, oracle, scaledSchema, d))
		assert.NotEqual(t, 1, s)
		assert.True(t, s >= 0 && s <= 4, s)
		for i, want := range []int{-1, 0, 1} {
			assert.NotEqual(t, want, l[i])
			assert.True(t, l[i] >= -1 && l[i] <= 1, l[i])
		}
		assert.Equal(t, 90.0, c)
	})
	t.Run("without a schema numbers are kept", func(t *testing.T) {
		assert.Equal(t, oracle, oracleReply(Model{Kind: KindJudgeYes}, oracle, nil, d))
		assert.Equal(t, oracle, oracleReply(Model{Kind: KindJudgeNoisy, P: 1}, oracle, nil, d))
	})
	t.Run("judge-noisy-p moves a share p, to every other value", func(t *testing.T) {
		const n, p = 3000, 0.3
		moved := 0
		to := map[int]int{}
		for i := range n {
			s, _, _ := scaled(t, oracleReply(Model{Kind: KindJudgeNoisy, P: p}, oracle, scaledSchema, hashOf("request", i)))
			if s != 1 {
				moved++
				to[s]++
			}
		}
		assert.InDelta(t, p, float64(moved)/n, 0.03)
		for _, v := range []int{0, 2, 3, 4} {
			assert.InDelta(t, 0.25, float64(to[v])/float64(moved), 0.05, "moved to %d", v)
		}
	})
}
