package baseline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/refkey"
)

// Kind is the behaviour of a baseline model.
type Kind string

// The baseline models. Do not rename: model ids appear in results and
// leaderboards.
const (
	// KindReference answers from the references index.
	KindReference Kind = "reference"
	// KindNoisy answers like reference but corrupts a share P of answers.
	KindNoisy Kind = "noisy"
	// KindFirst is a judge that always prefers answer 1.
	KindFirst Kind = "first"
	// KindSecond is a judge that always prefers answer 2.
	KindSecond Kind = "second"
	// KindEcho repeats the last user message (for dialogue plumbing tests).
	KindEcho Kind = "echo"

	// The role-play models (roleplay.go).

	// KindPersona answers like reference where a reference exists, else
	// in the voice of the request's system message (a persona).
	KindPersona Kind = "persona"
	// KindAssistant ignores any persona and answers as a generic AI
	// assistant: an out-of-character baseline.
	KindAssistant Kind = "assistant"
	// KindUser is a simulated user: it replies with the request's oracle
	// (the next user turn the task's own rule writes) and, after K of its
	// own turns, ends the conversation (modelapi.EndOfConversation).
	KindUser Kind = "user"

	// The scalar reward models, served on POST /pooling (reward.go).

	// KindRewardReference scores a reply by the agreement of its tool calls
	// with the reference answer.
	KindRewardReference Kind = "reward-reference"
	// KindRewardNoisy is reward-reference with a share P of scores
	// replaced by a uniform draw in [0, 1).
	KindRewardNoisy Kind = "reward-noisy"
	// KindRewardLength scores a reply by its length: the classic length
	// bias of reward models, as a floor to beat.
	KindRewardLength Kind = "reward-length"

	// The judges that answer from the request's oracle reply (judges.go).

	// KindJudge replies with the oracle verbatim.
	KindJudge Kind = "judge"
	// KindJudgeYes sets every JSON boolean of the oracle to true: a judge
	// biased to "met".
	KindJudgeYes Kind = "judge-yes"
	// KindJudgeNoisy flips each JSON boolean of the oracle with
	// probability P.
	KindJudgeNoisy Kind = "judge-noisy"
	// KindJudgeMalformed replies, with probability P, with something that
	// does not parse (truncated JSON or prose), else with the oracle.
	KindJudgeMalformed Kind = "judge-malformed"
)

// Model is a parsed baseline model id.
type Model struct {
	Kind Kind
	// P is the corruption share of a noisy model, in [0, 1].
	P float64
	// K is the number of turns a simulated user (user-<k>) writes before
	// it ends the conversation; 0 for one that never ends it (user).
	K int
}

// ID is the model id without the provider prefix, e.g. "noisy-0.2".
func (m Model) ID() string {
	if m.Kind == KindNoisy || m.Kind == KindRewardNoisy || m.Kind == KindJudgeNoisy || m.Kind == KindJudgeMalformed {
		return string(m.Kind) + "-" + strconv.FormatFloat(m.P, 'f', -1, 64)
	}
	if m.Kind == KindUser && m.K > 0 {
		return string(m.Kind) + "-" + strconv.Itoa(m.K)
	}
	return string(m.Kind)
}

// IsReward reports whether m is a scalar reward model (served on
// /pooling, not on /v1/chat/completions).
func (m Model) IsReward() bool {
	return m.Kind == KindRewardReference || m.Kind == KindRewardNoisy || m.Kind == KindRewardLength
}

// IsJudge reports whether m answers from the request's oracle reply.
func (m Model) IsJudge() bool {
	return m.Kind == KindJudge || m.Kind == KindJudgeYes || m.Kind == KindJudgeNoisy || m.Kind == KindJudgeMalformed
}

// ParseModel parses "reference", "noisy-0.2", "first", "second", "echo",
// "reward-reference", "reward-noisy-0.3", "reward-length", "judge",
// "judge-yes", "judge-noisy-0.2", "judge-malformed-0.2", "persona",
// "assistant", "user" or "user-3", with or without a "baseline/" prefix.
func ParseModel(name string) (Model, error) {
	name = strings.TrimPrefix(name, "baseline/")
	switch Kind(name) {
	case KindReference, KindFirst, KindSecond, KindEcho, KindRewardReference, KindRewardLength, KindJudge, KindJudgeYes,
		KindPersona, KindAssistant, KindUser:
		return Model{Kind: Kind(name)}, nil
	}
	if rest, ok := strings.CutPrefix(name, string(KindUser)+"-"); ok {
		k, err := strconv.Atoi(rest)
		if err != nil || k < 1 || rest != strconv.Itoa(k) {
			return Model{}, fmt.Errorf("baseline: model %q: a simulated user's turns must be a positive integer", name)
		}
		return Model{Kind: KindUser, K: k}, nil
	}
	for _, k := range []Kind{KindNoisy, KindRewardNoisy, KindJudgeNoisy, KindJudgeMalformed} {
		if rest, ok := strings.CutPrefix(name, string(k)+"-"); ok {
			p, err := strconv.ParseFloat(rest, 64)
			if err != nil || p < 0 || p > 1 {
				return Model{}, fmt.Errorf("baseline: model %q: noise share must be a number in [0, 1]", name)
			}
			return Model{Kind: k, P: p}, nil
		}
	}
	return Model{}, fmt.Errorf("baseline: unknown model %q (want reference, noisy-<p>, first, second, echo, reward-reference, reward-noisy-<p>, reward-length, judge, judge-yes, judge-noisy-<p>, judge-malformed-<p>, persona, assistant, user or user-<k>)", name)
}

// digest is a 32-byte hash used as the source of every deterministic choice.
type digest [32]byte

func hashOf(parts ...any) digest {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	var d digest
	h.Sum(d[:0])
	return d
}

// uniform maps d to [0, 1).
func (d digest) uniform() float64 { return float64(binary.BigEndian.Uint64(d[:8])>>11) / (1 << 53) }

// intn maps d to [0, n).
func (d digest) intn(n int) int { return int(binary.BigEndian.Uint64(d[8:16]) % uint64(n)) }

func (d digest) short() string { return hex.EncodeToString(d[:6]) }

// requestDigest hashes the whole request as sent: answers are a pure function
// of it and the server seed.
func requestDigest(req *openai.ChatCompletionRequest) digest {
	b, err := json.Marshal(req)
	if err != nil { // cannot happen for a request decoded from JSON
		b = []byte(fmt.Sprint(req))
	}
	return sha256.Sum256(b)
}

// answer is one generated choice.
type answer struct {
	content   string
	toolCalls []ToolCall
}

// generate produces choice i of req for model m; oracle is the request's
// oracle reply ("" when it has none).
func (s *Server) generate(req *openai.ChatCompletionRequest, m Model, rd digest, i int, oracle string) answer {
	seed := 0
	if req.Seed != nil {
		seed = *req.Seed
	}
	d := hashOf(rd, s.opts.Seed, seed, i)
	if m.IsJudge() {
		schema, _ := responseSchema(req)
		return answer{content: oracleReply(m, oracle, schema, d)}
	}
	switch m.Kind {
	case KindAssistant:
		return answer{content: assistantReply(req.Messages)}
	case KindUser:
		return answer{content: userReply(m, req.Messages, oracle)}
	case KindFirst, KindSecond:
		return judgeAnswer(req, m.Kind)
	case KindEcho:
		for j := len(req.Messages) - 1; j >= 0; j-- {
			if req.Messages[j].Role == openai.ChatMessageRoleUser {
				return answer{content: refkey.Text(req.Messages[j])}
			}
		}
		return answer{content: "[benchline baseline/echo] no user message"}
	}
	ref, ok := s.lookup(req.Messages, req.Tools)
	if !ok && m.Kind == KindPersona {
		return answer{content: personaReply(req.Messages)}
	}
	if !ok {
		if schema, isJSON := responseSchema(req); isJSON {
			b, _ := json.Marshal(fillSchema(schema, "", 0, 0))
			return answer{content: string(b)}
		}
		return answer{content: fmt.Sprintf("[benchline baseline/%s] no reference answer for this request (key %s)", m.ID(), refkey.Conversation(req.Messages)[:12])}
	}
	a := answer{content: ref.Content, toolCalls: ref.ToolCalls}
	if m.Kind == KindNoisy && hashOf(d, "noisy").uniform() < m.P {
		a = corrupt(a, req, hashOf(d, "how"))
	}
	return a
}

func (s *Server) lookup(msgs []openai.ChatCompletionMessage, tools []openai.Tool) (Reference, bool) {
	if s.opts.References == nil {
		return Reference{}, false
	}
	if len(tools) > 0 {
		if ref, ok := s.opts.References.Lookup(refkey.WithTools(msgs, refkey.ToolsHash(tools))); ok {
			return ref, true
		}
	}
	if ref, ok := s.opts.References.Lookup(refkey.Conversation(msgs)); ok {
		return ref, true
	}
	if k := refkey.LastUser(msgs); k != "" {
		return s.opts.References.Lookup(k)
	}
	return Reference{}, false
}

// judgeAnswer is the verdict of baseline/first or baseline/second: the
// TRBench "<choice>\nN\n</choice>" reply, or for JSON replies a document
// filled from the schema that prefers answer N.
func judgeAnswer(req *openai.ChatCompletionRequest, k Kind) answer {
	pick := 0
	if k == KindSecond {
		pick = 1
	}
	if schema, isJSON := responseSchema(req); isJSON {
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{
				"choice": map[string]any{"type": "integer"}, "reason": map[string]any{"type": "string"}}}
		}
		b, _ := json.Marshal(fillSchema(schema, "", pick, 0))
		return answer{content: string(b)}
	}
	return answer{content: fmt.Sprintf("<choice>\n%d\n</choice>", pick+1)}
}

// responseSchema reports whether req asks for JSON and returns the schema
// when it gives one.
func responseSchema(req *openai.ChatCompletionRequest) (map[string]any, bool) {
	rf := req.ResponseFormat
	if rf == nil {
		return nil, false
	}
	switch rf.Type {
	case openai.ChatCompletionResponseFormatTypeJSONObject:
		return nil, true
	case openai.ChatCompletionResponseFormatTypeJSONSchema:
		if rf.JSONSchema == nil || rf.JSONSchema.Schema == nil {
			return nil, true
		}
		b, err := rf.JSONSchema.Schema.MarshalJSON()
		if err != nil {
			return nil, true
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return nil, true
		}
		return m, true
	}
	return nil, false
}

var choiceWords = []string{"choice", "winner", "prefer", "better", "answer", "verdict", "pick", "select"}

// fillSchema builds a deterministic value that validates against the common
// subset of JSON Schema (type, enum, const, properties, items, minimum,
// maximum, anyOf/oneOf). pick 0 leans to "first"/high values, 1 to
// "second"/low values; properties whose names mention a choice get pick+1.
func fillSchema(schema map[string]any, name string, pick, depth int) any {
	if schema == nil || depth > 8 {
		return nil
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[min(pick, len(e)-1)]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			if sub, ok := alts[0].(map[string]any); ok {
				return fillSchema(sub, name, pick, depth+1)
			}
		}
	}
	typ, _ := schema["type"].(string)
	if ts, ok := schema["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	if typ == "" && schema["properties"] != nil {
		typ = "object"
	}
	lname := strings.ToLower(name)
	isChoice := false
	for _, w := range choiceWords {
		if strings.Contains(lname, w) {
			isChoice = true
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub, _ := props[k].(map[string]any)
			out[k] = fillSchema(sub, k, pick, depth+1)
		}
		return out
	case "array":
		sub, _ := schema["items"].(map[string]any)
		return []any{fillSchema(sub, name, pick, depth+1)}
	case "integer", "number":
		lo, hasLo := schema["minimum"].(float64)
		hi, hasHi := schema["maximum"].(float64)
		v := 1.0 - float64(pick)
		switch {
		case isChoice:
			v = float64(pick + 1)
		case pick == 0 && hasHi:
			v = hi
		case pick == 1 && hasLo:
			v = lo
		}
		if hasLo && v < lo {
			v = lo
		}
		if hasHi && v > hi {
			v = hi
		}
		if typ == "integer" {
			return int64(v)
		}
		return v
	case "boolean":
		return pick == 0
	case "null":
		return nil
	default: // string or unknown
		if isChoice {
			return strconv.Itoa(pick + 1)
		}
		return fmt.Sprintf("benchline baseline: prefers answer %d", pick+1)
	}
}

// Corruption kinds, chosen by hash. They mimic how real models fail.
var (
	toolFailures = []string{"wrong-argument", "missing-call", "wrong-function", "extra-argument"}
	codeHints    = []string{"def ", "return", "{", ";", "func ", "class ", "#include", "```", "=>", "print("}
	offTopic     = []string{
		"I'm not able to help with that, but did you know octopuses have three hearts?",
		"Let's talk about something else: the weather has been lovely lately.",
		"That reminds me of a recipe for banana bread. First, preheat the oven to 180°C.",
		"As an AI, I prefer not to answer this question.",
	}
	comparisons = []struct{ from, to string }{
		{"<=", "<"}, {">=", ">"}, {"==", "!="}, {"!=", "=="}, {" < ", " <= "}, {" > ", " >= "},
	}
	choiceRE = regexp.MustCompile(`<choice>\s*([12])\s*</choice>`)
	intRE    = regexp.MustCompile(`\b\d+\b`)
)

// corrupt turns a correct answer into a plausible wrong one.
func corrupt(a answer, req *openai.ChatCompletionRequest, d digest) answer {
	if len(a.toolCalls) > 0 {
		return corruptCalls(a, req, d)
	}
	c := a.content
	if m := choiceRE.FindStringSubmatch(c); m != nil {
		other := map[string]string{"1": "2", "2": "1"}[m[1]]
		return answer{content: strings.Replace(c, m[0], "<choice>\n"+other+"\n</choice>", 1)}
	}
	if isCode(c) {
		return answer{content: corruptCode(c, d)}
	}
	t := strings.TrimSpace(c)
	if len(t) <= 32 && !strings.Contains(t, "\n") {
		if n, err := strconv.Atoi(t); err == nil {
			return answer{content: strconv.Itoa(n + 1)}
		}
		if len(t) == 1 && t[0] >= 'A' && t[0] <= 'Y' {
			return answer{content: string(t[0] + 1)}
		}
	}
	return answer{content: offTopic[d.intn(len(offTopic))]}
}

func isCode(s string) bool {
	if !strings.Contains(s, "\n") {
		return false
	}
	for _, h := range codeHints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

// corruptCode introduces a bug: a flipped comparison, an off-by-one
// constant, or a dropped last line.
func corruptCode(c string, d digest) string {
	var options []func() string
	for _, cmp := range comparisons {
		if strings.Contains(c, cmp.from) {
			options = append(options, func() string { return strings.Replace(c, cmp.from, cmp.to, 1) })
			break
		}
	}
	if loc := intRE.FindStringIndex(c); loc != nil {
		options = append(options, func() string {
			n, _ := strconv.Atoi(c[loc[0]:loc[1]])
			return c[:loc[0]] + strconv.Itoa(n+1) + c[loc[1]:]
		})
	}
	if len(options) == 0 {
		lines := strings.Split(strings.TrimRight(c, "\n"), "\n")
		return strings.Join(lines[:len(lines)-1], "\n")
	}
	return options[d.intn(len(options))]()
}

func corruptCalls(a answer, req *openai.ChatCompletionRequest, d digest) answer {
	calls := append([]ToolCall(nil), a.toolCalls...)
	i := hashOf(d, "call").intn(len(calls))
	switch toolFailures[d.intn(len(toolFailures))] {
	case "missing-call":
		if len(calls) == 1 {
			return answer{content: "I don't have enough information to call a function for this request."}
		}
		calls = append(calls[:i], calls[i+1:]...)
	case "wrong-function":
		calls[i].Name = otherTool(req, calls[i].Name)
	case "extra-argument":
		calls[i].Arguments = withArg(calls[i].Arguments, func(m map[string]any) { m["unexpected_param"] = true })
	default: // wrong-argument
		calls[i].Arguments = withArg(calls[i].Arguments, func(m map[string]any) {
			if len(m) == 0 {
				m["unexpected_param"] = true
				return
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			k := keys[hashOf(d, "arg").intn(len(keys))]
			m[k] = wrongValue(m[k])
		})
	}
	return answer{content: a.content, toolCalls: calls}
}

func otherTool(req *openai.ChatCompletionRequest, name string) string {
	for _, t := range req.Tools {
		if t.Function != nil && t.Function.Name != name {
			return t.Function.Name
		}
	}
	return name + "_v2"
}

func withArg(raw json.RawMessage, f func(map[string]any)) json.RawMessage {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	f(m)
	b, _ := json.Marshal(m)
	return b
}

func wrongValue(v any) any {
	switch x := v.(type) {
	case float64:
		return x + 1
	case string:
		if x == "" {
			return "unknown"
		}
		return "not " + x
	case bool:
		return !x
	case []any:
		if len(x) > 1 {
			return x[:len(x)-1]
		}
		return append(x, x...)
	case nil:
		return "none"
	default:
		return nil
	}
}

// tokens estimates a token count the way the baselines bill: four
// characters a token, rounded up.
func tokens(s string) int { return (len(s) + 3) / 4 }

func promptTokens(req *openai.ChatCompletionRequest) int {
	n := 3
	for _, m := range req.Messages {
		n += 4 + tokens(refkey.Text(m))
		for _, tc := range m.ToolCalls {
			n += tokens(tc.Function.Name) + tokens(tc.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		n += tokens(string(b))
	}
	return n
}

func (a answer) tokens() int {
	n := tokens(a.content)
	for _, tc := range a.toolCalls {
		n += 3 + tokens(tc.Name) + tokens(string(tc.Arguments))
	}
	return max(n, 1)
}
