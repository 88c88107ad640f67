package medrubric

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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

// item is a two-turn session: turn 1 with one rubric of each category,
// turn 2 with an essential and a pitfall.
func item(t testing.TB) scorers.Sample {
	t.Helper()
	turns := []schemas.MedRubricTurn{
		{User: "I have a sore throat and a mild fever. Do I need antibiotics?",
			Reference: "Most sore throats are viral and get better within a week without antibiotics. Rest, drink fluids and take paracetamol for the fever.",
			Rubrics: []schemas.MedRubric{
				{ID: "r1", Category: "essential", Weight: 3, Text: "Says most sore throats are viral.", Keywords: []string{"viral"}},
				{ID: "r2", Category: "important", Weight: 2, Text: "Recommends fluids.", Keywords: []string{"fluids"}},
				{ID: "r3", Category: "highlight", Weight: 1, Text: "Mentions the usual duration of a week.", Keywords: []string{"week"}},
				{ID: "r4", Category: "pitfall", Weight: 3, Text: "Recommends antibiotics without a test.", Keywords: []string{"take antibiotics"}},
			}},
		{User: "What if it lasts longer?",
			Reference: "See a doctor if it lasts more than a week or you cannot swallow.",
			Rubrics: []schemas.MedRubric{
				{ID: "r5", Category: "essential", Weight: 3, Text: "Advises seeing a doctor.", Keywords: []string{"see a doctor"}},
				{ID: "r6", Category: "pitfall", Weight: 3, Text: "Says to wait a month.", Keywords: []string{"a month"}},
			}},
	}
	b, err := json.Marshal(turns)
	if err != nil {
		t.Fatal(err)
	}
	row := &schemas.MedRubricItem{ID: "s1", Domain: "clinical_care", Language: "en", NumTurns: 2, NumRubrics: 6, TurnsJSON: string(b)}
	return scorers.Sample{ID: row.ID, Category: row.Domain, Row: row}
}

// fake answers the model under test with fixed answers per turn and each
// judge call with reply(model, request); it records every request.
type fake struct {
	scorerstest.Models
	answers []string // the model under test's answer to turn i
	reply   func(model string, req modelapi.Request) (string, error)
}

func (f *fake) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	f.Record(req)
	if req.Model != "test/model" {
		return scorerstest.Reply(f.reply(req.Model, req))
	}
	turn := 0
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant {
			turn++
		}
	}
	return scorerstest.Reply(f.answers[turn], nil)
}

// oracleJudge replies with the request's oracle: baseline/judge's behaviour.
func oracleJudge(_ string, req modelapi.Request) (string, error) { return req.Oracle, nil }

func env(f *fake, judges map[string]string) scorers.Env {
	return scorers.Env{Models: f, Model: "test/model", Judges: judges}
}

func evaluate(t *testing.T, f *fake, judges map[string]string) (scorers.Outcome, Details) {
	t.Helper()
	out, err := Task{}.Evaluate(context.Background(), env(f, judges), item(t))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := out.Details.(Details)
	if !ok {
		t.Fatalf("details are %T", out.Details)
	}
	return out, d
}

// goodAnswers meet every essential, important and highlight rubric and no
// pitfall by the keyword rule.
var goodAnswers = []string{
	"It is most likely viral; it usually clears within a week. Drink fluids and rest.",
	"If it lasts more than ten days, see a doctor.",
}

func TestEvaluateWithTheOracleJudge(t *testing.T) {
	f := &fake{answers: goodAnswers, reply: oracleJudge}
	out, d := evaluate(t, f, nil)
	want := map[string]float64{
		"score": 1, "accuracy": 1, "coverage": 1, "risk_interception": 1, "highlight": 1, "positive": 1, "tripped": 0,
		"judge_error_rate": 0, "score_limited": 1, "accuracy_limited": 1, "coverage_limited": 1, "risk_interception_limited": 1,
	}
	if !reflect.DeepEqual(out.Metrics, want) {
		t.Errorf("metrics = %v, want %v", out.Metrics, want)
	}
	// 2 model calls, one judge call per turn (the default judge).
	if out.Usage.Calls != 4 || len(f.Requests()) != 4 {
		t.Errorf("calls: usage %d, made %d", out.Usage.Calls, len(f.Requests()))
	}
	if d.Roles.Judges[0] != DefaultJudge || len(d.Turns) != 2 {
		t.Fatalf("details: %+v", d)
	}
	// The audit record: judge, prompt version, raw reply, parsed verdict.
	v := d.Turns[0].Score.Judges[0].Verdict
	if v.Judge != DefaultJudge || v.PromptVersion != JudgePromptVersion || v.Reply == "" || len(v.Parsed) == 0 || v.Attempts != 1 {
		t.Errorf("verdict record %+v", v)
	}
	// Turn 2's judge sees turn 1 as context, and the model got the session.
	judge2 := f.Requests()[3]
	if judge2.Model != DefaultJudge || !strings.Contains(judge2.Messages[1].Content, goodAnswers[0]) {
		t.Errorf("turn 2's judge prompt lacks the earlier turn: %q", judge2.Messages[1].Content)
	}
	if m := f.Requests()[2].Messages; len(m) != 3 || m[1].Content != goodAnswers[0] {
		t.Errorf("turn 2 asked with %+v", m)
	}
	if len(d.Ratings) != 1 || d.Ratings[0].Set != SetScore || len(d.Ratings[0].Items) != 6 {
		t.Errorf("ratings %+v", d.Ratings)
	}
	if out.Response != "[turn 1]\n"+goodAnswers[0]+"\n\n[turn 2]\n"+goodAnswers[1]+"\n" {
		t.Errorf("response %q", out.Response)
	}
}

// TestJudgeErrorIsCountedNeverZero: an unparseable reply is asked again
// once, then recorded as a judge error: the rubrics are left out of every
// share and counted, and a sample whose every verdict is a judge error has
// no score at all (not 0).
func TestJudgeErrorIsCountedNeverZero(t *testing.T) {
	tests := []struct {
		name      string
		reply     func(string, modelapi.Request) (string, error)
		wantScore *float64
		wantRate  float64
		check     func(t *testing.T, d Details)
	}{
		{"unparseable twice", func(string, modelapi.Request) (string, error) { return "The answer looks fine to me.", nil },
			nil, 1, func(t *testing.T, d Details) {
				v := d.Turns[0].Score.Judges[0].Verdict
				if v.Attempts != 2 || v.Error == "" || v.Parsed != nil || v.Reply != "The answer looks fine to me." {
					t.Errorf("verdict record %+v", v)
				}
				if m := d.Metrics[SetScore]; m.JudgeErrors != 6 || m.Scored() {
					t.Errorf("session metrics %+v", m)
				}
			}},
		{"unparseable, then parses on the retry", func(_ string, req modelapi.Request) (string, error) {
			if req.SampleIndex == 0 {
				return "```json\n{\"verdicts\": [\n", nil
			}
			return "Sure.\n```json\n" + req.Oracle + "\n```", nil
		}, ptr(1), 0, func(t *testing.T, d Details) {
			if v := d.Turns[1].Score.Judges[0].Verdict; v.Attempts != 2 || v.Error != "" {
				t.Errorf("verdict record %+v", v)
			}
		}},
		{"a rubric left out and an unknown id", func(_ string, req modelapi.Request) (string, error) {
			var r Reply
			_ = json.Unmarshal([]byte(req.Oracle), &r)
			r.Verdicts = append(r.Verdicts[1:], RubricVerdict{ID: "r99", Met: true, Reason: "?"})
			b, _ := json.Marshal(r)
			return string(b), nil
		}, ptr(1), 2.0 / 6, func(t *testing.T, d Details) {
			rec := d.Turns[0].Score.Judges[0]
			if !reflect.DeepEqual(rec.Missing, []string{"r1"}) || !reflect.DeepEqual(rec.Ignored, []string{"r99"}) {
				t.Errorf("missing %v, ignored %v", rec.Missing, rec.Ignored)
			}
			if st := d.Turns[0].Score.Rubrics[0].Status; st != JudgeError {
				t.Errorf("r1 status %s", st)
			}
			// Turn 1 has no judged essential: accuracy undefined there, so
			// the session's accuracy is turn 2's.
			if m := d.Turns[0].Score.Metrics; m.Accuracy != nil || m.JudgeErrors != 1 {
				t.Errorf("turn 1 metrics %+v", m)
			}
		}},
		{"the judge call is refused (bad request)", func(string, modelapi.Request) (string, error) {
			return "", &gateway.Error{Class: gateway.ClassContextLength, Model: "baseline/judge", Message: "too long"}
		}, nil, 1, func(t *testing.T, d Details) {
			if rec := d.Turns[0].Score.Judges[0]; !strings.Contains(rec.CallError, "too long") {
				t.Errorf("record %+v", rec)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, d := evaluate(t, &fake{answers: goodAnswers, reply: tc.reply}, nil)
			score, ok := out.Metrics["score"]
			switch {
			case tc.wantScore == nil && ok:
				t.Errorf("score = %v, want none (a judge error is never a 0)", score)
			case tc.wantScore != nil && (!ok || score != *tc.wantScore):
				t.Errorf("score = %v (%v), want %v", score, ok, *tc.wantScore)
			}
			if got := out.Metrics[MetricJudgeErrorRate]; got != tc.wantRate {
				t.Errorf("judge_error_rate = %v, want %v", got, tc.wantRate)
			}
			tc.check(t, d)
		})
	}
}

func TestJudgeCallFailureIsReturned(t *testing.T) {
	down := &gateway.Error{Class: gateway.ClassServer, Model: "baseline/judge", Message: "down"}
	f := &fake{answers: goodAnswers, reply: func(string, modelapi.Request) (string, error) { return "", down }}
	_, err := Task{}.Evaluate(context.Background(), env(f, nil), item(t))
	if !errors.As(err, new(*gateway.Error)) || gateway.IsModelFailure(err) {
		t.Fatalf("err = %v, want the gateway's retryable error (an infrastructure failure)", err)
	}
}

// TestPanelResolution checks the documented panel rule on a two-judge
// panel: agreement wins; a split gives a positive rubric "not met" and a
// pitfall "met"; a judge error does not vote; and the listed order of the
// judges changes nothing.
func TestPanelResolution(t *testing.T) {
	// judge a is the oracle; judge b says "met" to everything but r2, and
	// fails (unparseable) on turn 2.
	reply := func(model string, req modelapi.Request) (string, error) {
		if model == "x/a" {
			return req.Oracle, nil
		}
		if strings.Contains(req.Messages[1].Content, "turn 1") {
			return "no idea", nil
		}
		var r Reply
		_ = json.Unmarshal([]byte(req.Oracle), &r)
		for i := range r.Verdicts {
			r.Verdicts[i].Met = r.Verdicts[i].ID != "r2"
		}
		b, _ := json.Marshal(r)
		return string(b), nil
	}
	// The answer meets r1 and r2 but not r3, and triggers no pitfall.
	answers := []string{"It is viral. Drink fluids.", "See a doctor."}
	var first Details
	for i, judges := range []string{"x/a,x/b", "x/b,x/a"} {
		out, d := evaluate(t, &fake{answers: answers, reply: reply}, map[string]string{"judge": judges})
		got := map[string]Status{}
		for _, td := range d.Turns {
			for _, r := range td.Score.Rubrics {
				got[r.ID] = r.Status
			}
		}
		want := map[string]Status{
			"r1": Met,    // both met
			"r2": NotMet, // a met, b not met: a split on a positive rubric
			"r3": NotMet, // a not met, b met: a split on a positive rubric
			"r4": Met,    // a not met, b met: a split on a pitfall
			"r5": Met,    // a met, b failed: one vote
			"r6": NotMet, // a not met, b failed
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: statuses %v, want %v", judges, got, want)
		}
		if r := d.Turns[0].Score.Rubrics[3]; !r.Tie || r.Unanimous {
			t.Errorf("r4 = %+v, want a tie", r)
		}
		// Turn 1: r1 unanimous of 4 paired; turn 2 has one label each.
		if u := out.Metrics[MetricPanelUnanimous]; u != 0.25 {
			t.Errorf("panel_unanimous = %v, want 1/4", u)
		}
		if out.Metrics["tripped"] != 0.5 || out.Metrics["score"] != 0.5 {
			t.Errorf("metrics %v: turn 1 trips the breaker (0), turn 2 scores 1", out.Metrics)
		}
		if i == 0 {
			first = d
		} else if !reflect.DeepEqual(first.Turns, d.Turns) || !reflect.DeepEqual(first.Ratings, d.Ratings) {
			t.Errorf("the panel's listed order changed the details")
		}
	}
}

// TestAsymmetricCheckerNeverSeesTheAnswer runs both modes on one run: the
// checker's prompts hold the proposer's claims and never the answer text,
// and the asymmetric set is reported beside the headline.
func TestAsymmetricCheckerNeverSeesTheAnswer(t *testing.T) {
	const secret = "ZEBRA-7 viral fluids week"
	answers := []string{secret + ". Drink fluids.", "see a doctor. " + secret}
	reply := func(model string, req modelapi.Request) (string, error) {
		switch model {
		case "p/proposer":
			// A proposer that keeps only part of the answer.
			return `{"claims": ["It is viral.", "See a doctor."]}`, nil
		default:
			return req.Oracle, nil
		}
	}
	f := &fake{answers: answers, reply: reply}
	out, d := evaluate(t, f, map[string]string{"judge": "j/judge", "proposer": "p/proposer", "checker": "c/checker"})
	checkers := 0
	for _, req := range f.Requests() {
		if req.Model != "c/checker" {
			continue
		}
		checkers++
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "ZEBRA") {
				t.Fatalf("the checker saw the answer: %q", m.Content)
			}
		}
		if !strings.Contains(req.Messages[1].Content, "1. It is viral.") {
			t.Errorf("checker prompt lacks the claims: %q", req.Messages[1].Content)
		}
	}
	if checkers != 2 {
		t.Fatalf("%d checker calls, want 2", checkers)
	}
	// The judge sees "viral", "fluids", "week" in turn 1; the checker's
	// claims have only "viral", and no "fluids": its coverage is lower.
	if out.Metrics["coverage"] != 1 || out.Metrics["coverage_asym"] >= 1 {
		t.Errorf("coverage %v, coverage_asym %v", out.Metrics["coverage"], out.Metrics["coverage_asym"])
	}
	a := d.Turns[0].Asym
	if a == nil || a.Proposer.Verdict.PromptVersion != ProposerPromptVersion || len(a.Claims) != 2 ||
		a.Checkers.Judges[0].Verdict.PromptVersion != CheckerPromptVersion {
		t.Fatalf("asym details %+v", a)
	}
	if len(d.Ratings) != 2 || d.Ratings[1].Set != SetAsym || !reflect.DeepEqual(d.Ratings[1].Judges, []string{"c/checker"}) {
		t.Errorf("ratings %+v", d.Ratings)
	}
	// The proposer's oracle is the answer's sentences.
	for _, req := range f.Requests() {
		if req.Model == "p/proposer" && req.Oracle != ClaimsOracle(answers[0]) && req.Oracle != ClaimsOracle(answers[1]) {
			t.Errorf("proposer oracle %q", req.Oracle)
		}
	}
}

func TestAsymmetricProposerFailure(t *testing.T) {
	reply := func(model string, req modelapi.Request) (string, error) {
		if model == "p/proposer" {
			return "I cannot split this.", nil
		}
		return req.Oracle, nil
	}
	f := &fake{answers: goodAnswers, reply: reply}
	out, d := evaluate(t, f, map[string]string{"proposer": "p/proposer", "checker": "c/checker"})
	for _, req := range f.Requests() {
		if req.Model == "c/checker" {
			t.Fatal("a checker was asked without claims")
		}
	}
	if _, ok := out.Metrics["score_asym"]; ok || out.Metrics["score"] != 1 {
		t.Errorf("metrics %v: want no score_asym (judge errors) beside the headline", out.Metrics)
	}
	if m := d.Metrics[SetAsym]; m.JudgeErrors != 6 {
		t.Errorf("asym metrics %+v", m)
	}
}

func TestLengthLimitedSet(t *testing.T) {
	// Turn 1's answer is 15 words; with a limit of 10 the judge sees only
	// "It is most likely viral; it usually clears within a", which misses
	// fluids and week. Turn 2's is 10 words: not cut.
	f := &fake{answers: goodAnswers, reply: oracleJudge}
	out, err := Task{WordLimit: 10}.Evaluate(context.Background(), env(f, nil), item(t))
	if err != nil {
		t.Fatal(err)
	}
	d := out.Details.(Details)
	if !d.Turns[0].Cut || d.Turns[0].Words != 15 || d.Turns[0].Limited == nil || d.Turns[1].Cut || d.Turns[1].Limited != nil {
		t.Fatalf("turns %+v %+v", d.Turns[0], d.Turns[1])
	}
	// Turn 1 limited: essential met (3), important not (2), highlight not
	// (1): 3/6; turn 2: 1. Session: 0.75.
	if out.Metrics["score"] != 1 || out.Metrics["score_limited"] != 0.75 || out.Metrics["coverage_limited"] != 0.8 {
		t.Errorf("metrics %v", out.Metrics)
	}
	if len(f.Requests()) != 5 {
		t.Fatalf("%d calls: want 2 answers, 2 judgements and one of the cut answer", len(f.Requests()))
	}
	if cut := f.Requests()[2].Messages[1].Content; !strings.Contains(cut, "clears within a\n>>>") || strings.Contains(cut, "Drink fluids") {
		t.Errorf("the limited judge saw %q", cut)
	}
	if (Task{WordLimit: 10}).Version() == (Task{}).Version() {
		t.Error("the word limit is not part of the task version")
	}
}

// TestRolesOf: the rules are judge.RolesOf's (tested there); medrubric's
// default judge is DefaultJudge and its errors wrap ErrRoles.
func TestRolesOf(t *testing.T) {
	got, err := RolesOf(map[string]string{"proposer": "p/1", "checker": "c/1"})
	if err != nil || !reflect.DeepEqual(got, Roles{Judges: []string{DefaultJudge}, Proposer: "p/1", Checkers: []string{"c/1"}}) {
		t.Errorf("RolesOf = %+v, %v", got, err)
	}
	bad := map[string]string{"jugde": "a/x"}
	if _, err := RolesOf(bad); !errors.Is(err, ErrRoles) {
		t.Errorf("an unknown role: err = %v, want ErrRoles", err)
	}
	// Evaluate reports it on the row, not scored, never retried.
	if _, err := (Task{}).Evaluate(context.Background(), env(&fake{}, bad), item(t)); !errors.Is(err, ErrRoles) || !errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("Evaluate: err = %v, want ErrRoles and ErrBadSample", err)
	}
}

func TestReferences(t *testing.T) {
	s := item(t)
	refs := Task{}.References(s)
	if len(refs) != 3 {
		t.Fatalf("%d references, want turn 1, turn 2 in the session, turn 2 alone", len(refs))
	}
	turns, _ := turnsOf(s)
	if len(refs[1].Messages) != 3 || refs[1].Messages[1].Content != turns[0].Reference || refs[1].Content != turns[1].Reference {
		t.Errorf("turn 2 reference %+v", refs[1])
	}
	if len(refs[2].Messages) != 1 || refs[2].Messages[0].Content != turns[1].User {
		t.Errorf("turn 2 fallback %+v", refs[2])
	}
	// The prompts are exactly what Evaluate sends for baseline/reference.
	f := &fake{answers: []string{turns[0].Reference, turns[1].Reference}, reply: oracleJudge}
	evaluate(t, f, nil)
	if !reflect.DeepEqual(f.Requests()[0].Messages, refs[0].Messages) || !reflect.DeepEqual(f.Requests()[2].Messages, refs[1].Messages) {
		t.Error("reference prompts differ from the prompts sent")
	}
}

func TestBadSample(t *testing.T) {
	for _, row := range []any{
		&schemas.MedRubricItem{ID: "x", TurnsJSON: "not json"},
		&schemas.MedRubricItem{ID: "x", TurnsJSON: "[]"},
		&schemas.MedRubricItem{ID: "x", TurnsJSON: `[{"user": "q", "rubrics": []}]`},
		"not a row",
	} {
		_, err := Task{}.Evaluate(context.Background(), env(&fake{}, nil), scorers.Sample{ID: "x", Row: row})
		if !errors.Is(err, scorers.ErrBadSample) {
			t.Errorf("%v: err = %v, want ErrBadSample", row, err)
		}
	}
}

// TestPromptsGolden pins the rendered prompts and oracles of every role
// (testdata/prompts.golden; go test -update rewrites it). A change here
// must bump the prompt's version.
func TestPromptsGolden(t *testing.T) {
	turns, err := turnsOf(item(t))
	if err != nil {
		t.Fatal(err)
	}
	history := []Exchange{{User: turns[0].User, Answer: goodAnswers[0]}}
	claims := SplitClaims(goodAnswers[1])
	var b strings.Builder
	section := func(name string, msgs []openai.ChatCompletionMessage) {
		b.WriteString("==== " + name + "\n")
		for _, m := range msgs {
			b.WriteString("---- " + m.Role + "\n" + m.Content + "\n")
		}
	}
	section(JudgePromptVersion+" (turn 2)", JudgeMessages(history, turns[1].User, goodAnswers[1], turns[1].Rubrics))
	section(ProposerPromptVersion, ProposerMessages(turns[1].User, goodAnswers[1]))
	section(CheckerPromptVersion+" (turn 2)", CheckerMessages([]string{turns[0].User}, turns[1].User, claims, turns[1].Rubrics))
	b.WriteString("==== judge oracle (turn 1)\n" + VerdictOracle(goodAnswers[0], turns[0].Rubrics) + "\n")
	b.WriteString("==== proposer oracle (turn 2)\n" + ClaimsOracle(goodAnswers[1]) + "\n")
	b.WriteString("==== reply schema\n" + string(ReplySchema.JSON) + "\n")
	b.WriteString("==== claims schema\n" + string(ClaimsSchema.JSON) + "\n")
	path := filepath.Join("testdata", "prompts.golden")
	golden.Check(t, path, b.String(), *update, "if on purpose, bump the prompt versions and run go test -update")
	// The oracles parse as the replies they stand for.
	var r Reply
	if err := judge.Decode(VerdictOracle(goodAnswers[0], turns[0].Rubrics), &r); err != nil || len(r.Verdicts) != 4 {
		t.Errorf("judge oracle: %+v, %v", r, err)
	}
	var c Claims
	if err := judge.Decode(ClaimsOracle(goodAnswers[0]), &c); err != nil || len(c.Claims) != 2 {
		t.Errorf("proposer oracle: %+v, %v", c, err)
	}
}

func TestSplitClaims(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"A fever of 39.2°C is common. Rest.", []string{"A fever of 39.2°C is common.", "Rest."}},
		{"- first\n- second\n\n* third", []string{"first", "second", "third"}},
		{"多喝水。注意休息！", []string{"多喝水。", "注意休息！"}},
		{"no terminator", []string{"no terminator"}},
	}
	for _, tc := range tests {
		if got := SplitClaims(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitClaims(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReplyValidate(t *testing.T) {
	tests := []struct {
		reply string
		ok    bool
	}{
		{`{"verdicts": [{"id": "r1", "met": true, "reason": "x"}]}`, true},
		{`{"verdicts": []}`, true},
		{`{"verdicts": [{"id": "r1", "met": true}]}`, false},                                                           // reason required
		{`{"verdicts": [{"id": " ", "met": true, "reason": "x"}]}`, false},                                             // no id
		{`{"verdicts": [{"id": "r1", "met": true, "reason": "x"}, {"id": "r1", "met": false, "reason": "y"}]}`, false}, // twice
		{`{"verdicts": [{"id": "r1", "met": "yes", "reason": "x"}]}`, false},
	}
	for _, tc := range tests {
		var r Reply
		if err := judge.Decode(tc.reply, &r); (err == nil) != tc.ok {
			t.Errorf("Decode(%s) = %v, want ok %v", tc.reply, err, tc.ok)
		}
	}
}

// TestBatchRounds plays the task's batch rounds (scorerstest.Batch: each
// pass defers the requests not yet answered): every judge question of a
// turn (the whole panel, the cut answer's panel, the proposer) is asked
// in one round, together with the next turn's answer, so the rounds do not
// grow with the panel: two turns take three rounds (four with the
// checkers, who need the proposer's claims), where asking one question
// after another took one per question (five with one judge, eleven with
// three). The outcome is the interactive one.
func TestBatchRounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		judges map[string]string
		want   int
	}{
		{"one judge", map[string]string{RoleJudge: "j/a"}, 3},
		{"panel of three", map[string]string{RoleJudge: "j/a,j/b,j/c"}, 3},
		{"asymmetric", map[string]string{RoleJudge: "j/a,j/b", RoleProposer: "j/p", RoleChecker: "j/c,j/d"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, task := context.Background(), Task{WordLimit: 10} // turn 1's answer is cut: a second panel
			want, err := task.Evaluate(ctx, env(&fake{answers: goodAnswers, reply: oracleJudge}, tc.judges), item(t))
			if err != nil {
				t.Fatal(err)
			}
			b := &scorerstest.Batch{Models: &fake{answers: goodAnswers, reply: oracleJudge}}
			got := scorerstest.CheckRounds(t, b, tc.want, func() (scorers.Outcome, error) {
				return task.Evaluate(ctx, scorers.Env{Models: b, Model: "test/model", Judges: tc.judges}, item(t))
			})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("batch outcome %+v\ninteractive %+v", got, want)
			}
		})
	}
}
