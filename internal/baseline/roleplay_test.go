package baseline

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/benchline/benchline/internal/modelapi"
)

func msgs(pairs ...string) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, openai.ChatCompletionMessage{Role: pairs[i], Content: pairs[i+1]})
	}
	return out
}

const (
	sys  = openai.ChatMessageRoleSystem
	usr  = openai.ChatMessageRoleUser
	asst = openai.ChatMessageRoleAssistant
)

func TestPersonaReply(t *testing.T) {
	tests := []struct {
		name string
		in   []openai.ChatCompletionMessage
		want string
	}{
		{"first turn", msgs(sys, "You are Mara Voss. You keep the lighthouse.\nStay in character.", usr, "Hello there."),
			`I am Mara Voss. You say: "Hello there.". I am glad you came to me.`},
		{"remembers every earlier user message",
			msgs(sys, "You are Mara Voss.", usr, "I love storms.", asst, "…", usr, " Any news? ", asst, "…", usr, "Goodbye."),
			`I am Mara Voss. You say: "Goodbye.". I remember what you told me: "I love storms." "Any news?". I am glad you came to me.`},
		{"Chinese persona", msgs(sys, "你是林奶奶。你在村口开茶馆。", usr, "我不喝咖啡。", asst, "…", usr, "今天有什么茶？"),
			"我是林奶奶。你说：“今天有什么茶？”。我记得你告诉过我：“我不喝咖啡。”。很高兴你来找我。"},
		{"a persona that is not 'You are'", msgs(sys, "Speak like a pirate! Always.", usr, "Ahoy"),
			`Speak like a pirate! You say: "Ahoy". I am glad you came to me.`},
		{"no system message", msgs(usr, "Hi"), `You say: "Hi". I am glad you came to me.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, personaReply(tc.in))
		})
	}
}

func TestAssistantReply(t *testing.T) {
	assert.Equal(t, `As an AI assistant, I do not play characters, but I can help with your message: "Tell me a story.".`,
		assistantReply(msgs(sys, "You are Mara Voss.", usr, "Tell me a story.")))
	assert.Equal(t, "作为一个AI助手，我不扮演角色，但我可以帮你处理这条消息：“讲个故事吧。”。",
		assistantReply(msgs(sys, "You are Mara Voss.", usr, "讲个故事吧。")))
}

func TestUserReply(t *testing.T) {
	// The simulated user's view: its own turns are the assistant messages.
	after := func(turns int) []openai.ChatCompletionMessage {
		m := msgs(sys, "You are a user.", usr, "Start.")
		for range turns {
			m = append(m, msgs(asst, "my turn", usr, "the character's reply")...)
		}
		return m
	}
	tests := []struct {
		name   string
		model  Model
		turns  int
		oracle string
		want   string
	}{
		{"user-2 writes the oracle", Model{Kind: KindUser, K: 2}, 0, "Hello.", "Hello."},
		{"user-2, second turn", Model{Kind: KindUser, K: 2}, 1, "And then?", "And then?"},
		{"user-2 ends after two turns", Model{Kind: KindUser, K: 2}, 2, "More?", modelapi.EndOfConversation},
		{"user never ends", Model{Kind: KindUser}, 40, "More?", "More?"},
		{"no oracle: a labelled text", Model{Kind: KindUser}, 0, "", NoOracleReply(Model{Kind: KindUser})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, userReply(tc.model, after(tc.turns), tc.oracle))
		})
	}
}

// TestRoleplayOverHTTP: the persona prefers a reference, the simulated
// user reads its oracle from the header, and the assistant ignores both.
func TestRoleplayOverHTTP(t *testing.T) {
	refs := NewMemoryReferences()
	refs.Add(msgs(usr, "Is the lamp lit?"), Reference{Content: "Aye, since dusk."})
	_, _, hs := newTestServer(t, Options{References: refs})
	send := func(model, oracle string, m []openai.ChatCompletionMessage) string {
		t.Helper()
		body, _ := json.Marshal(openai.ChatCompletionRequest{Model: model, Messages: m})
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/v1/chat/completions", strings.NewReader(string(body)))
		require.NoError(t, err)
		if oracle != "" {
			req.Header.Set(modelapi.OracleHeader, base64.StdEncoding.EncodeToString([]byte(oracle)))
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var out openai.ChatCompletionResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		assert.Equal(t, "baseline/"+strings.TrimPrefix(model, "baseline/"), out.Model)
		return out.Choices[0].Message.Content
	}
	persona := msgs(sys, "You are Mara Voss.", usr, "Is the lamp lit?")
	assert.Equal(t, "Aye, since dusk.", send("persona", "", persona), "a reference wins")
	assert.Equal(t, `I am Mara Voss. You say: "Any ships?". I am glad you came to me.`,
		send("persona", "", msgs(sys, "You are Mara Voss.", usr, "Any ships?")))
	assert.Contains(t, send("assistant", "ignored", persona), "As an AI assistant")
	assert.Equal(t, "I came about the storm.", send("user-1", "I came about the storm.", msgs(sys, "x", usr, "Start.")))
	assert.Equal(t, modelapi.EndOfConversation, send("baseline/user-1", "More?", msgs(sys, "x", usr, "Start.", asst, "I came.", usr, "Welcome.")))
}

// scoreSchema is a response schema with a bounded integer score and an
// unbounded count, as a judge's reply schema has.
var scoreSchema = map[string]any{"type": "object", "properties": map[string]any{
	"scores": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
		"score": map[string]any{"type": "integer", "minimum": 1.0, "maximum": 5.0},
		"count": map[string]any{"type": "integer"},
	}}}}}

// scores reads the score of each entry of a scores document.
func scores(t *testing.T, doc string) []int {
	t.Helper()
	var v struct {
		Scores []struct {
			Score int `json:"score"`
			Count int `json:"count"`
		} `json:"scores"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &v), doc)
	out := make([]int, len(v.Scores))
	for i, s := range v.Scores {
		out[i] = s.Score
		assert.Equal(t, 7, s.Count, "unbounded integers are kept")
	}
	return out
}

func TestOracleTransformsOfBoundedIntegers(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"scores":[`)
	want := make([]int, 200)
	for i := range want {
		if i > 0 {
			b.WriteByte(',')
		}
		want[i] = 1 + i%5
		b.WriteString(`{"score":` + string(rune('0'+want[i])) + `,"count":7,"reason":"r"}`)
	}
	b.WriteString(`]}`)
	oracle := b.String()
	d := hashOf("a request")

	t.Run("judge-yes: every score at the maximum", func(t *testing.T) {
		for _, s := range scores(t, oracleReply(Model{Kind: KindJudgeYes}, oracle, scoreSchema, d)) {
			assert.Equal(t, 5, s)
		}
	})
	t.Run("judge-noisy-1: every score one step away, within bounds", func(t *testing.T) {
		got := scores(t, oracleReply(Model{Kind: KindJudgeNoisy, P: 1}, oracle, scoreSchema, d))
		up := 0
		for i, s := range got {
			assert.Equal(t, 1, abs(s-want[i]), "score %d: %d → %d", i, want[i], s)
			assert.True(t, s >= 1 && s <= 5)
			if s > want[i] {
				up++
			}
		}
		assert.Greater(t, up, 40, "both directions occur")
	})
	t.Run("judge-noisy-0.3: a share moved", func(t *testing.T) {
		got := scores(t, oracleReply(Model{Kind: KindJudgeNoisy, P: 0.3}, oracle, scoreSchema, d))
		moved := 0
		for i := range got {
			if got[i] != want[i] {
				moved++
			}
		}
		assert.InDelta(t, 0.3, float64(moved)/float64(len(got)), 0.1)
	})
	t.Run("without a schema: integers are kept", func(t *testing.T) {
		assert.Equal(t, oracle, oracleReply(Model{Kind: KindJudgeYes}, oracle, nil, d))
		assert.Equal(t, oracle, oracleReply(Model{Kind: KindJudgeNoisy, P: 1}, oracle, nil, d))
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestJudgeYesReadsTheRequestSchema checks end to end that the bounds come
// from the request's response_format.
func TestJudgeYesReadsTheRequestSchema(t *testing.T) {
	_, _, hs := newTestServer(t, Options{})
	schema, err := json.Marshal(scoreSchema)
	require.NoError(t, err)
	req := openai.ChatCompletionRequest{Model: "judge-yes", Messages: msgs(usr, "Score it."),
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "scores", Strict: true, Schema: json.RawMessage(schema)}}}
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequest(http.MethodPost, hs.URL+"/v1/chat/completions", strings.NewReader(string(body)))
	require.NoError(t, err)
	hreq.Header.Set(modelapi.OracleHeader, base64.StdEncoding.EncodeToString([]byte(`{"scores":[{"score":2,"count":7}]}`)))
	resp, err := http.DefaultClient.Do(hreq)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out openai.ChatCompletionResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	assert.Equal(t, []int{5}, scores(t, out.Choices[0].Message.Content))
}
