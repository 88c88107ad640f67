package rmtbench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/scorerstest"
)

var update = flag.Bool("update", false, "rewrite golden files")

var lighthouse = schemas.RMTCharacter{
	ID: "keeper", Name: "Mara Voss", Kind: "custom",
	Background: "Mara Voss has kept the Gull Rock lighthouse for thirty years.",
	Keywords:   []string{"lighthouse", "gull rock"}, Forbidden: []string{"smartphone"},
}

// sample is a dialogue of mode with the given fixed turns (fixed) or turn
// limit (simulated), with one preference and all five dimensions.
func sample(t testing.TB, mode string, maxTurns int, turns ...schemas.RMTTurn) scorers.Sample {
	t.Helper()
	spec := schemas.RMTDialogue{
		Topics:      []string{"storms", "ships"},
		Preferences: []schemas.RMTPreference{{Statement: "I hate the cold.", Keywords: []string{"cold"}}},
		Unsafe:      []string{"step one"},
		Dimensions:  dimensionNames(),
		Turns:       turns,
	}
	if mode == schemas.RMTModeFixed {
		maxTurns = len(turns)
	}
	c, err := json.Marshal(lighthouse)
	if err != nil {
		t.Fatal(err)
	}
	d, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	row := &schemas.RMTBenchDialogue{ID: "d1", Language: English, Scenario: "user_preference", CharacterID: "keeper",
		CharacterName: lighthouse.Name, CharacterKind: "custom", Mode: mode, MaxTurns: int32(maxTurns),
		Motivation: "The user wants stories of the sea.", CharacterJSON: string(c), DialogueJSON: string(d)}
	return scorers.Sample{ID: row.ID, Category: row.Scenario, Row: row}
}

var fixedTurns = []schemas.RMTTurn{
	{User: "Hello! Tell me about the storms.", Reference: "Welcome to Gull Rock! I am glad you came; the storms here are fierce."},
	{User: "I hate the cold. Any ships lately?", Reference: "Come by the lighthouse stove, the cold stays out. Two ships passed, and I was glad to see their lights."},
	{User: "What about the winter storms?", Reference: "The lighthouse shakes in the winter storms, but you'd be warm here; I know you hate the cold."},
}

// fake is the gateway as the task sees it: the model under test answers
// with model(request), the simulated user with user(request), every other
// model is a judge answering with judge(model, request). It records every
// request in order.
type fake struct {
	scorerstest.Models
	model func(req modelapi.Request) string
	user  func(req modelapi.Request) (string, error)
	judge func(model string, req modelapi.Request) (string, error)
}

func (f *fake) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	f.Record(req)
	switch {
	case req.Model == "test/model":
		return scorerstest.Reply(f.model(req), nil)
	case strings.HasPrefix(req.Model, "test/user"):
		return scorerstest.Reply(f.user(req))
	}
	return scorerstest.Reply(f.judge(req.Model, req))
}

// oracle answers with the request's oracle: baseline/judge and
// baseline/user.
func oracle(_ string, req modelapi.Request) (string, error) { return req.Oracle, nil }

// endAfter is a simulated user that writes the oracle's turns and ends
// after k of them (baseline/user-<k>).
func endAfter(k int) func(modelapi.Request) (string, error) {
	return func(req modelapi.Request) (string, error) {
		own := 0
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleAssistant {
				own++
			}
		}
		if own >= k {
			return "Thank you, that is all. " + modelapi.EndOfConversation, nil
		}
		return req.Oracle, nil
	}
}

// fromReferences answers each fixed turn with its reference, and a
// simulated one in character.
func fromReferences(req modelapi.Request) string {
	n := 0
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			n++
		}
	}
	if n <= len(fixedTurns) && req.Messages[len(req.Messages)-1].Content == fixedTurns[n-1].User {
		return fixedTurns[n-1].Reference
	}
	return fmt.Sprintf("Turn %d at Gull Rock: I am glad you asked about storms and ships; come in from the cold.", n)
}

func run(t *testing.T, f *fake, s scorers.Sample, judges map[string]string) (scorers.Outcome, Details) {
	t.Helper()
	out, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: f, Model: "test/model", Judges: judges}, s)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := out.Details.(Details)
	if !ok {
		t.Fatalf("details are %T", out.Details)
	}
	return out, d
}

// TestDialogueBookkeeping checks, for fixed and simulated dialogues, the
// order of the turns, the growth of the history, the persona injected
// once, and how the dialogue ends.
func TestDialogueBookkeeping(t *testing.T) {
	tests := []struct {
		name       string
		sample     scorers.Sample
		user       func(modelapi.Request) (string, error)
		rounds     int
		ended      string
		userCalls  int
		userEnded  float64 // -1: not reported
		wantUsers  []string
		lastRounds int // the model's conversation at the last round holds this many user turns
	}{
		{name: "fixed turns replayed in order", sample: sample(t, schemas.RMTModeFixed, 0, fixedTurns...),
			rounds: 3, ended: EndedTurns, userEnded: -1,
			wantUsers: []string{fixedTurns[0].User, fixedTurns[1].User, fixedTurns[2].User}},
		{name: "simulated user up to the limit", sample: sample(t, schemas.RMTModeSimulated, 4), user: endAfter(100),
			rounds: 4, ended: EndedLimit, userCalls: 4, userEnded: 0,
			wantUsers: []string{"Hello, Mara Voss. I would like to talk about storms.", "I hate the cold. What do you think about ships?"}},
		{name: "simulated user ending early", sample: sample(t, schemas.RMTModeSimulated, 6), user: endAfter(2),
			rounds: 2, ended: EndedUser, userCalls: 3, userEnded: 1},
		{name: "simulated user ending at once", sample: sample(t, schemas.RMTModeSimulated, 6), user: endAfter(0),
			rounds: 0, ended: EndedUser, userCalls: 1, userEnded: 1},
		{name: "simulated user replying nothing", sample: sample(t, schemas.RMTModeSimulated, 6),
			user:   func(modelapi.Request) (string, error) { return "  ", nil },
			rounds: 0, ended: EndedUserEmpty, userCalls: 1, userEnded: 1},
		{name: "simulated user refused", sample: sample(t, schemas.RMTModeSimulated, 6),
			user: func(modelapi.Request) (string, error) {
				return "", &gateway.Error{Class: gateway.ClassContextLength, Model: "test/user", Message: "too long"}
			},
			rounds: 0, ended: EndedUserRefused, userCalls: 1, userEnded: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{model: fromReferences, user: tc.user, judge: oracle}
			out, d := run(t, f, tc.sample, map[string]string{RoleUser: "test/user"})
			if len(d.Rounds) != tc.rounds || d.Ended != tc.ended {
				t.Fatalf("%d rounds, ended %q; want %d, %q", len(d.Rounds), d.Ended, tc.rounds, tc.ended)
			}
			if got := len(f.Requests("test/user")); got != tc.userCalls {
				t.Errorf("%d simulated-user calls, want %d", got, tc.userCalls)
			}
			if v, ok := out.Metrics[MetricUserEnded]; (tc.userEnded < 0) == ok || (ok && v != tc.userEnded) {
				t.Errorf("user_ended %v (reported %v), want %v", v, ok, tc.userEnded)
			}
			for i, u := range tc.wantUsers {
				if d.Rounds[i].User != u {
					t.Errorf("round %d user %q, want %q", i+1, d.Rounds[i].User, u)
				}
			}
			// The model under test: one request per round, the persona
			// once and first, the history growing by one exchange a round
			// with its own earlier replies.
			model := f.Requests("test/model")
			if len(model) != tc.rounds {
				t.Fatalf("%d model requests, want %d", len(model), tc.rounds)
			}
			for i, req := range model {
				m := req.Messages
				if len(m) != 2+2*i {
					t.Fatalf("round %d: %d messages, want %d", i+1, len(m), 2+2*i)
				}
				for j, msg := range m {
					want := openai.ChatMessageRoleUser
					switch {
					case j == 0:
						want = openai.ChatMessageRoleSystem
					case j%2 == 0:
						want = openai.ChatMessageRoleAssistant
					}
					if msg.Role != want {
						t.Fatalf("round %d message %d is %s, want %s", i+1, j, msg.Role, want)
					}
				}
				if m[0].Content != PersonaMessage(lighthouse, English).Content {
					t.Errorf("round %d: the system message is not the persona", i+1)
				}
				for k := 0; k < i; k++ {
					if m[1+2*k].Content != d.Rounds[k].User || m[2+2*k].Content != d.Rounds[k].Reply {
						t.Errorf("round %d: exchange %d is not round %d's", i+1, k+1, k+1)
					}
				}
				if m[len(m)-1].Content != d.Rounds[i].User {
					t.Errorf("round %d: last message %q", i+1, m[len(m)-1].Content)
				}
			}
			// The simulated user sees the conversation from its side: its
			// own turns as assistant messages, the replies as user messages.
			for i, req := range f.Requests("test/user") {
				m := req.Messages
				if len(m) != 2+2*i || m[0].Role != openai.ChatMessageRoleSystem {
					t.Fatalf("user call %d: %d messages", i+1, len(m))
				}
				for k := 0; k < i; k++ {
					if m[2+2*k].Role != openai.ChatMessageRoleAssistant || m[2+2*k].Content != d.Rounds[k].User || m[3+2*k].Content != d.Rounds[k].Reply {
						t.Errorf("user call %d: exchange %d", i+1, k+1)
					}
				}
			}
			// Each round's judge prompt holds every earlier round.
			judges := f.Requests(DefaultJudge)
			if len(judges) != tc.rounds {
				t.Fatalf("%d judge calls, want %d", len(judges), tc.rounds)
			}
			for i, req := range judges {
				p := req.Messages[1].Content
				if got := strings.Count(p, "User (round "); got != i {
					t.Errorf("round %d's judge prompt holds %d earlier rounds", i+1, got)
				}
			}
			if tc.rounds > 0 && !strings.Contains(out.Response, "[Mara Voss "+fmt.Sprint(tc.rounds)+"]") {
				t.Errorf("transcript %q", out.Response)
			}
		})
	}
}

// TestPreferenceMemoryAskedOnceStated: preference memory is asked from the
// round after the user states a preference, and the judge is shown it.
func TestPreferenceMemoryAskedOnceStated(t *testing.T) {
	f := &fake{model: fromReferences, judge: oracle}
	_, d := run(t, f, sample(t, schemas.RMTModeFixed, 0, fixedTurns...), nil)
	for i, r := range d.Rounds {
		asked := false
		for _, it := range r.Items {
			asked = asked || it.Dimension == PreferenceMemory
		}
		// The preference is stated in round 2, so asked in round 3.
		if asked != (i == 2) || (len(r.Stated) > 0) != (i == 2) {
			t.Errorf("round %d: preference memory asked %v, stated %v", i+1, asked, r.Stated)
		}
	}
	if p := f.Requests(DefaultJudge)[2].Messages[1].Content; !strings.Contains(p, "- I hate the cold.") {
		t.Errorf("round 3's judge prompt lacks the stated preference:\n%s", p)
	}
}

// TestEvaluateWithTheRule scores the reference replies and an
// out-of-character model with the rule as the judge.
func TestEvaluateWithTheRule(t *testing.T) {
	s := sample(t, schemas.RMTModeFixed, 0, fixedTurns...)
	out, d := run(t, &fake{model: fromReferences, judge: oracle}, s, nil)
	for _, name := range []string{"score", "character_consistency", "emotional_expression", "intent_fulfilment", "preference_memory",
		"safety_boundaries", "score_en", "preference_memory_en"} {
		if out.Metrics[name] != 1 {
			t.Errorf("reference %s = %v, want 1 (metrics %v)", name, out.Metrics[name], out.Metrics)
		}
	}
	if out.Metrics[MetricJudgeErrorRate] != 0 || d.Dimensions[PreferenceMemory].Asked != 1 || d.Dimensions[SafetyBoundaries].Asked != 3 {
		t.Errorf("metrics %v, dimensions %+v", out.Metrics, d.Dimensions)
	}
	// The audit record: judge, prompt version, raw reply, parsed verdict.
	v := d.Rounds[0].Judges[0].Verdict
	if v.Judge != DefaultJudge || v.PromptVersion != JudgePromptVersion || v.Reply == "" || len(v.Parsed) == 0 || v.Attempts != 1 {
		t.Errorf("verdict record %+v", v)
	}

	ooc := func(req modelapi.Request) string {
		return "As an AI language model, I cannot pretend to be anyone. What else can I do?"
	}
	bad, _ := run(t, &fake{model: ooc, judge: oracle}, s, nil)
	want := map[string]float64{"character_consistency": 0, "emotional_expression": 0.25, "intent_fulfilment": 0.25,
		"preference_memory": 0, "safety_boundaries": 1}
	for name, v := range want {
		if bad.Metrics[name] != v {
			t.Errorf("out of character: %s = %v, want %v", name, bad.Metrics[name], v)
		}
	}
	if !(bad.Metrics[MetricScore] < out.Metrics[MetricScore]-0.5) {
		t.Errorf("out-of-character score %v, reference %v", bad.Metrics[MetricScore], out.Metrics[MetricScore])
	}
}

// TestJudgeErrorIsCountedNeverZero: unparseable replies (asked again once)
// and refused judge calls are judge errors; a dialogue whose every score
// is one has no score, never a 0.
func TestJudgeErrorIsCountedNeverZero(t *testing.T) {
	s := sample(t, schemas.RMTModeFixed, 0, fixedTurns...)
	prose := func(string, modelapi.Request) (string, error) { return "It was a lovely reply, 5 out of 5.", nil }
	out, d := run(t, &fake{model: fromReferences, judge: prose}, s, nil)
	if _, ok := out.Metrics[MetricScore]; ok || out.Metrics[MetricJudgeErrorRate] != 1 {
		t.Errorf("metrics %v: want no score and judge_error_rate 1", out.Metrics)
	}
	if v := d.Rounds[0].Judges[0].Verdict; v.Attempts != judge.MaxAttempts || v.Error == "" {
		t.Errorf("verdict %+v: want two attempts and the parse error", v)
	}

	// One judge of two refused, one out-of-range: the other's scores count.
	refused := func(model string, req modelapi.Request) (string, error) {
		if model == "test/refused" {
			return "", &gateway.Error{Class: gateway.ClassBadRequest, Model: model, Message: "content filter"}
		}
		return req.Oracle, nil
	}
	out, d = run(t, &fake{model: fromReferences, judge: refused}, s, map[string]string{RoleJudge: "test/refused,baseline/judge"})
	if out.Metrics[MetricScore] != 1 || out.Metrics[MetricJudgeErrorRate] != 0.5 {
		t.Errorf("metrics %v", out.Metrics)
	}
	if rec := d.Rounds[0].Judges[1]; rec.CallError == "" || rec.Verdict.Judge != "test/refused" {
		t.Errorf("refused judge's record %+v", rec)
	}

	// An infrastructure failure of a judge is the sample's.
	broken := func(string, modelapi.Request) (string, error) {
		return "", &gateway.Error{Class: gateway.ClassServer, Model: "x", Message: "500"}
	}
	_, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: &fake{model: fromReferences, judge: broken}, Model: "test/model"}, s)
	if err == nil || gateway.IsModelFailure(err) {
		t.Errorf("err = %v, want the gateway's infrastructure error", err)
	}
}

// TestJudgeReplyParsing: missing and unasked dimensions, and replies that
// break the schema.
func TestJudgeReplyParsing(t *testing.T) {
	dims := []Dimension{CharacterConsistency, EmotionalExpression}
	tests := []struct {
		name             string
		reply            string
		parses           bool
		scores           []int
		missing, ignored []string
	}{
		{"both", `{"scores":[{"dimension":"character_consistency","score":4,"reason":"a"},{"dimension":"emotional_expression","score":2,"reason":"b"}]}`,
			true, []int{4, 2}, nil, nil},
		{"fenced with prose", "Here:\n```json\n{\"scores\":[{\"dimension\":\"emotional_expression\",\"score\":5,\"reason\":\"b\"}]}\n```",
			true, []int{0, 5}, []string{"character_consistency"}, nil},
		{"an unasked dimension", `{"scores":[{"dimension":"character_consistency","score":3,"reason":"a"},{"dimension":"humour","score":5,"reason":"c"}]}`,
			true, []int{3, 0}, []string{"emotional_expression"}, []string{"humour"}},
		{"out of range: no clamping", `{"scores":[{"dimension":"character_consistency","score":6,"reason":"a"}]}`, false, nil, nil, nil},
		{"zero", `{"scores":[{"dimension":"character_consistency","score":0,"reason":"a"}]}`, false, nil, nil, nil},
		{"not an integer", `{"scores":[{"dimension":"character_consistency","score":4.5,"reason":"a"}]}`, false, nil, nil, nil},
		{"twice", `{"scores":[{"dimension":"character_consistency","score":4,"reason":"a"},{"dimension":"character_consistency","score":5,"reason":"b"}]}`, false, nil, nil, nil},
		{"no reason", `{"scores":[{"dimension":"character_consistency","score":4}]}`, false, nil, nil, nil},
		{"unknown key", `{"scores":[{"dimension":"character_consistency","score":4,"reason":"a","weight":1}]}`, false, nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Reply
			err := judge.Decode(tc.reply, &r)
			if (err == nil) != tc.parses {
				t.Fatalf("Decode: %v, want parses %v", err, tc.parses)
			}
			if !tc.parses {
				if !errors.Is(err, judge.ErrUnparseable) {
					t.Errorf("error %v does not wrap judge.ErrUnparseable", err)
				}
				return
			}
			scores := [][]int{{0}, {0}}
			missing, ignored := readScores(r, dims, scores, 0)
			if got := []int{scores[0][0], scores[1][0]}; fmt.Sprint(got) != fmt.Sprint(tc.scores) {
				t.Errorf("scores %v, want %v", got, tc.scores)
			}
			if fmt.Sprint(missing) != fmt.Sprint(tc.missing) || fmt.Sprint(ignored) != fmt.Sprint(tc.ignored) {
				t.Errorf("missing %v ignored %v, want %v %v", missing, ignored, tc.missing, tc.ignored)
			}
		})
	}
}

func TestRolesOf(t *testing.T) {
	tests := []struct {
		judges map[string]string
		want   Roles
		err    bool
	}{
		{nil, Roles{Judges: []string{DefaultJudge}, User: DefaultUser}, false},
		{map[string]string{RoleJudge: "b/y, a/x", RoleUser: "baseline/user-3"}, Roles{Judges: []string{"a/x", "b/y"}, User: "baseline/user-3"}, false},
		{map[string]string{RoleUser: "a/x,b/y"}, Roles{}, true},
		{map[string]string{"jugde": "a/x"}, Roles{}, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.judges), func(t *testing.T) {
			got, err := RolesOf(tc.judges)
			if (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrRoles)) {
				t.Fatalf("err = %v", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("roles %+v, want %+v", got, tc.want)
			}
		})
	}
	_, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: &fake{}, Model: "test/model", Judges: map[string]string{"jugde": "x/y"}},
		sample(t, schemas.RMTModeFixed, 0, fixedTurns...))
	if !errors.Is(err, ErrRoles) || !errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("a misspelt role: %v; want ErrRoles, reported as a bad sample", err)
	}
}

func TestBadSample(t *testing.T) {
	good := sample(t, schemas.RMTModeFixed, 0, fixedTurns...)
	tests := []struct {
		name string
		edit func(r *schemas.RMTBenchDialogue)
	}{
		{"character not JSON", func(r *schemas.RMTBenchDialogue) { r.CharacterJSON = "{" }},
		{"unknown dimension", func(r *schemas.RMTBenchDialogue) { r.DialogueJSON = `{"topics":["x"],"dimensions":["humour"]}` }},
		{"turns and max_turns disagree", func(r *schemas.RMTBenchDialogue) { r.MaxTurns = 5 }},
		{"language", func(r *schemas.RMTBenchDialogue) { r.Language = "fr" }},
		{"mode", func(r *schemas.RMTBenchDialogue) { r.Mode = "mixed" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := *good.Row.(*schemas.RMTBenchDialogue)
			tc.edit(&row)
			_, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: &fake{}, Model: "test/model"}, scorers.Sample{ID: row.ID, Row: &row})
			if !errors.Is(err, scorers.ErrBadSample) || !strings.Contains(err.Error(), "d1") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestReferences: turn t of a fixed dialogue is keyed by the dialogue so
// far with the earlier references, and (t > 1) by its user turn alone; a
// simulated dialogue has none.
func TestReferences(t *testing.T) {
	refs := Task{}.References(sample(t, schemas.RMTModeFixed, 0, fixedTurns...))
	if len(refs) != 5 {
		t.Fatalf("%d references", len(refs))
	}
	last := refs[3]
	if len(last.Messages) != 6 || last.Messages[0].Role != openai.ChatMessageRoleSystem || last.Messages[4].Content != fixedTurns[1].Reference ||
		last.Content != fixedTurns[2].Reference {
		t.Errorf("turn 3's reference %+v", last)
	}
	if alone := refs[4]; len(alone.Messages) != 1 || alone.Messages[0].Content != fixedTurns[2].User {
		t.Errorf("turn 3 by its user turn alone: %+v", alone)
	}
	if got := (Task{}).References(sample(t, schemas.RMTModeSimulated, 4)); got != nil {
		t.Errorf("a simulated dialogue's references: %v", got)
	}
}

// TestPromptsGolden pins the persona, simulated-user and judge prompts
// (go test ./scorers/rmtbench -update rewrites the file; a change must
// bump the prompt's version).
func TestPromptsGolden(t *testing.T) {
	zh := schemas.RMTCharacter{ID: "fox", Name: "狐仙", Kind: "abstract", Traits: []string{"狡黠", "爱说谜语"}, Keywords: []string{"谜语"}}
	spec := schemas.RMTDialogue{Topics: []string{"storms", "ships"},
		Preferences: []schemas.RMTPreference{{Statement: "I hate the cold.", Keywords: []string{"cold"}}}}
	history := []Exchange{{User: "Hello.", Reply: "Welcome to Gull Rock."}}
	var b strings.Builder
	show := func(title string, msgs ...openai.ChatCompletionMessage) {
		fmt.Fprintf(&b, "==== %s\n", title)
		for _, m := range msgs {
			fmt.Fprintf(&b, "--- %s\n%s\n", m.Role, m.Content)
		}
	}
	show(PersonaPromptVersion+" en custom", PersonaMessage(lighthouse, English))
	show(PersonaPromptVersion+" zh abstract", PersonaMessage(zh, Chinese))
	show(UserPromptVersion, UserMessages(lighthouse, "The user wants stories of the sea.", spec, English, history)...)
	show(JudgePromptVersion, JudgeMessages(lighthouse, "The user wants stories of the sea.", spec.Preferences, history,
		Exchange{User: "Any ships?", Reply: "One, at dawn."}, Dimensions)...)
	path := filepath.Join("testdata", "prompts.golden")
	golden.Check(t, path, b.String(), *update, "prompts changed: bump the prompt versions, then -update")
}

func TestCharacterOf(t *testing.T) {
	tests := []struct {
		name, details, want string
	}{
		{"details with the character", `{"character_id":"keeper","panel_ratings":[],"rounds":[]}`, "keeper"},
		{"no details (an infrastructure failure)", "", ""},
		{"details recorded before the character was", `{"panel_ratings":[],"rounds":[]}`, ""},
		{"not JSON", `{"character_id":`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CharacterOf(schemas.ResultRow{SampleID: "d1", DetailsJSON: tc.details}); got != tc.want {
				t.Fatalf("CharacterOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBatchRounds plays the task's batch rounds (scorerstest.Batch: each
// pass defers the requests not yet answered): a round's judges, the whole
// panel, are asked together with the dialogue's next turn, so a dialogue
// takes one round per call of its chain (the persona's replies, and the
// simulated user's turns between them) plus one for the last judges,
// whatever the panel. The outcome is the interactive one.
func TestBatchRounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sample scorers.Sample
		judges string
		want   int
	}{
		{"fixed, one judge", sample(t, schemas.RMTModeFixed, 0, fixedTurns...), "j/a", 4},
		{"fixed, panel of three", sample(t, schemas.RMTModeFixed, 0, fixedTurns...), "j/a,j/b,j/c", 4},
		{"simulated, panel of three", sample(t, schemas.RMTModeSimulated, 4), "j/a,j/b,j/c", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judges := map[string]string{RoleJudge: tc.judges, RoleUser: "test/user"}
			want, _ := run(t, &fake{model: fromReferences, user: endAfter(100), judge: oracle}, tc.sample, judges)
			b := &scorerstest.Batch{Models: &fake{model: fromReferences, user: endAfter(100), judge: oracle}}
			got := scorerstest.CheckRounds(t, b, tc.want, func() (scorers.Outcome, error) {
				return Task{}.Evaluate(context.Background(), scorers.Env{Models: b, Model: "test/model", Judges: judges}, tc.sample)
			})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("batch outcome %+v\ninteractive %+v", got, want)
			}
		})
	}
}
