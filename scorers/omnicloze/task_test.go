package omnicloze

import (
	"bytes"
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

	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/gateway"
	"github.com/benchline/benchline/internal/golden"
	"github.com/benchline/benchline/internal/judge"
	"github.com/benchline/benchline/internal/modelapi"
	"github.com/benchline/benchline/schemas"
	"github.com/benchline/benchline/scorers"
	"github.com/benchline/benchline/scorers/scorerstest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testBlanks are the blanks of testItem.
func testBlanks() []schemas.ClozeBlank {
	return []schemas.ClozeBlank{
		{Blank: 1, Options: []string{"cello", "violin", "flute"}, Answer: "violin"},
		{Blank: 2, Options: []string{"applause", "thunder"}, Answer: "applause"},
		{Blank: 3, Options: []string{"dark red", "green", "red"}, Answer: "dark red"},
	}
}

// testItem is an audio item with three blanks.
func testItem(t testing.TB) *schemas.OmniClozeItem {
	t.Helper()
	b, err := json.Marshal(testBlanks())
	if err != nil {
		t.Fatal(err)
	}
	return &schemas.OmniClozeItem{
		ID: "mu-x", MediaKind: schemas.MediaAudio, MediaURI: "https://media.example.invalid/mu-x.wav",
		MediaSHA256: strings.Repeat("ab", 32), MediaType: "audio/wav", Domain: "music", Subcategory: "live",
		Caption:   "A violin plays under a dark red curtain, then applause.",
		Passage:   "A [BLANK_1] plays to the hall; [BLANK_2] follows under a [BLANK_3] curtain.",
		NumBlanks: 3, BlanksJSON: string(b), Origin: "hand-written",
	}
}

func sample(it *schemas.OmniClozeItem) scorers.Sample {
	return scorers.Sample{ID: it.ID, Category: Category(it), Row: it}
}

// fake answers the model under test with caption and each judge call with
// reply(model, request); it records every request.
type fake struct {
	scorerstest.Models
	caption string
	reply   func(model string, req modelapi.Request) (string, error)
}

func (f *fake) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	f.Record(req)
	if req.Model == "test/captioner" {
		return scorerstest.Reply(f.caption, nil)
	}
	return scorerstest.Reply(f.reply(req.Model, req))
}

// oracleJudge replies with the request's oracle: baseline/judge's behaviour.
func oracleJudge(_ string, req modelapi.Request) (string, error) { return req.Oracle, nil }

// answering replies to every blank with pick(blank).
func answering(pick func(b schemas.ClozeBlank) string) func(string, modelapi.Request) (string, error) {
	return func(string, modelapi.Request) (string, error) {
		var r FillReply
		for _, b := range testBlanks() {
			r.Answers = append(r.Answers, BlankAnswer{Blank: b.Blank, Option: pick(b)})
		}
		out, err := json.Marshal(r)
		return string(out), err
	}
}

func evaluate(t *testing.T, f *fake, judges map[string]string) (scorers.Outcome, Details) {
	t.Helper()
	out, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: f, Model: "test/captioner", Judges: judges}, sample(testItem(t)))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := out.Details.(Details)
	if !ok {
		t.Fatalf("details are %T", out.Details)
	}
	return out, d
}

// TestJudgeTables is the table of judges with known outcomes: the metrics
// an item gets from a judge that always answers the same way.
func TestJudgeTables(t *testing.T) {
	ng := func(b schemas.ClozeBlank) string { return Letter(len(b.Options)) }
	distractor := func(b schemas.ClozeBlank) string {
		for i, o := range b.Options {
			if o != b.Answer {
				return Letter(i)
			}
		}
		return ""
	}
	right := func(b schemas.ClozeBlank) string { return b.Answer } // by text, not letter
	for _, tc := range []struct {
		name    string
		caption string
		reply   func(string, modelapi.Request) (string, error)
		want    map[string]float64
	}{
		{"always Not Given: omission 1, hallucination 0", "anything", answering(ng),
			map[string]float64{MetricAccuracy: 0, MetricOmission: 1, MetricHallucination: 0, MetricOmitted: 3}},
		{"always a distractor: hallucination 1", "anything", answering(distractor),
			map[string]float64{MetricAccuracy: 0, MetricOmission: 0, MetricHallucination: 1, MetricHallucinated: 3}},
		{"always the answer, by its text", "anything", answering(right),
			map[string]float64{MetricAccuracy: 1, MetricOmission: 0, MetricHallucination: 0, MetricCorrect: 3}},
		// The lexical oracle over a caption that names the violin (right),
		// says nothing of the audience (Not Given) and calls the curtain
		// green (a distractor): one of each.
		{"the oracle judge on a mixed caption", "A violin plays before a green curtain.", oracleJudge,
			map[string]float64{MetricAccuracy: 1.0 / 3, MetricOmission: 1.0 / 3, MetricHallucination: 1.0 / 3, MetricCorrect: 1, MetricOmitted: 1, MetricHallucinated: 1}},
		// "dark red" and "red" both occur: the longest, the answer, wins.
		{"the oracle judge on the reference caption", "", oracleJudge,
			map[string]float64{MetricAccuracy: 1, MetricOmission: 0, MetricHallucination: 0, MetricCorrect: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caption := tc.caption
			if caption == "" {
				caption = testItem(t).Caption
			}
			out, d := evaluate(t, &fake{caption: caption, reply: tc.reply}, nil)
			for k, v := range tc.want {
				if !near(out.Metrics[k], v) {
					t.Errorf("%s = %v, want %v (metrics %v)", k, out.Metrics[k], v, out.Metrics)
				}
			}
			if out.Metrics[MetricJudged] != 3 || out.Metrics[MetricJudgeErrorRate] != 0 || out.Response != caption {
				t.Errorf("metrics %v, response %q", out.Metrics, out.Response)
			}
			if !reflect.DeepEqual(d.Judges, []string{DefaultJudge}) || len(d.Records) != 1 || d.Records[0].Verdict.PromptVersion != FillPromptVersion {
				t.Errorf("details: judges %v, records %+v", d.Judges, d.Records)
			}
		})
	}
}

// TestJudgeErrorsAreCountedNeverZero: an unparseable reply (after its
// retry), a blank left out and an option that names none of the blank's
// are judge errors: recorded, counted in judge_error_rate, and left out of
// the rates; an item with no judged blank has no rates at all.
func TestJudgeErrorsAreCountedNeverZero(t *testing.T) {
	t.Run("unparseable reply", func(t *testing.T) {
		f := &fake{caption: "c", reply: func(string, modelapi.Request) (string, error) { return "I think B, then A.", nil }}
		out, d := evaluate(t, f, nil)
		if _, ok := out.Metrics[MetricAccuracy]; ok || out.Metrics[MetricJudgeErrorRate] != 1 || out.Metrics[MetricJudged] != 0 {
			t.Errorf("metrics %v", out.Metrics)
		}
		if v := d.Records[0].Verdict; v.Attempts != 2 || !v.Failed() || v.Reply != "I think B, then A." || d.Tally.JudgeErrors != 3 {
			t.Errorf("record %+v, tally %+v", v, d.Tally)
		}
	})
	t.Run("a blank left out and an invalid option", func(t *testing.T) {
		f := &fake{caption: "c", reply: func(string, modelapi.Request) (string, error) {
			return `{"answers": [{"blank": 1, "option": "B"}, {"blank": 2, "option": "Z"}, {"blank": 9, "option": "A"}]}`, nil
		}}
		out, d := evaluate(t, f, nil)
		rec := d.Records[0]
		if !reflect.DeepEqual(rec.Missing, []int{3}) || !reflect.DeepEqual(rec.Invalid, []int{2}) || !reflect.DeepEqual(rec.Ignored, []int{9}) {
			t.Errorf("record %+v", rec)
		}
		if out.Metrics[MetricAccuracy] != 1 || !near(out.Metrics[MetricJudgeErrorRate], 2.0/3) || out.Metrics[MetricJudged] != 1 {
			t.Errorf("metrics %v", out.Metrics)
		}
	})
	t.Run("a refused judge call", func(t *testing.T) {
		f := &fake{caption: "c", reply: func(string, modelapi.Request) (string, error) {
			return "", &gateway.Error{Class: gateway.ClassContextLength, Model: "x/judge", Message: "too long"}
		}}
		out, d := evaluate(t, f, map[string]string{RoleJudge: "x/judge"})
		if d.Records[0].CallError == "" || out.Metrics[MetricJudgeErrorRate] != 1 {
			t.Errorf("record %+v, metrics %v", d.Records[0], out.Metrics)
		}
	})
}

// TestPanel: three judges vote per blank; a judge error does not vote, a
// tie goes to Not Given, and the labels are stored for the agreement.
func TestPanel(t *testing.T) {
	replies := map[string]string{
		"p/a": `{"answers": [{"blank": 1, "option": "B"}, {"blank": 2, "option": "A"}, {"blank": 3, "option": "A"}]}`,
		"p/b": `{"answers": [{"blank": 1, "option": "B"}, {"blank": 2, "option": "C"}, {"blank": 3, "option": "C"}]}`,
		"p/c": `not json`,
	}
	f := &fake{caption: "c", reply: func(m string, _ modelapi.Request) (string, error) { return replies[m], nil }}
	out, d := evaluate(t, f, map[string]string{RoleJudge: "p/c, p/b,p/a,p/a"})
	if !reflect.DeepEqual(d.Judges, []string{"p/a", "p/b", "p/c"}) {
		t.Fatalf("panel %v", d.Judges)
	}
	// Blank 1: both say violin; blank 2: applause vs Not Given, a tie, so
	// Not Given; blank 3: dark red vs red, a tie, so Not Given.
	want := []struct {
		choice  string
		outcome Outcome
		tie     bool
	}{{"violin", Correct, false}, {NotGiven, Omission, true}, {NotGiven, Omission, true}}
	for i, w := range want {
		b := d.Blanks[i]
		if b.Choice != w.choice || b.Outcome != w.outcome || b.Tie != w.tie || b.Labels[2] != "" {
			t.Errorf("blank %d: %+v, want %+v", i+1, b, w)
		}
	}
	if !d.Blanks[0].Unanimous || !near(out.Metrics[MetricPanelUnanimous], 1.0/3) || !near(out.Metrics[MetricJudgeErrorRate], 1.0/3) {
		t.Errorf("metrics %v", out.Metrics)
	}
	rs, err := judge.RatingsOf(mustJSON(t, d))
	if err != nil || len(rs) != 1 || rs[0].Set != SetAccuracy || len(rs[0].Items) != 3 || rs[0].Items[1][0] != "applause" {
		t.Errorf("ratings %+v (%v)", rs, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUnknownRole(t *testing.T) {
	_, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: &fake{}, Model: "test/captioner",
		Judges: map[string]string{"jugde": "baseline/judge"}}, sample(testItem(t)))
	if !errors.Is(err, ErrRoles) || !errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("err = %v", err)
	}
}

// TestCaptionRequest: an image goes as an image_url part, other media by
// URI in the text; the text differs per item, so references find it.
func TestCaptionRequest(t *testing.T) {
	for _, tc := range []struct {
		kind, mime, part string
	}{
		{schemas.MediaVisual, "image/jpeg", PartImageURL},
		{schemas.MediaVisual, "video/mp4", PartText},
		{schemas.MediaAudio, "audio/wav", PartText},
		{schemas.MediaAudioVisual, "video/mp4", PartText},
	} {
		t.Run(tc.kind+" "+tc.mime, func(t *testing.T) {
			it := testItem(t)
			it.MediaKind, it.MediaType = tc.kind, tc.mime
			f := &fake{caption: it.Caption, reply: oracleJudge}
			out, err := Task{}.Evaluate(context.Background(), scorers.Env{Models: f, Model: "test/captioner"}, sample(it))
			if err != nil {
				t.Fatal(err)
			}
			msg := f.Requests()[0].Messages[0]
			hasImage := len(msg.MultiContent) == 2 && msg.MultiContent[1].Type == openai.ChatMessagePartTypeImageURL &&
				msg.MultiContent[1].ImageURL.URL == it.MediaURI
			if MediaPart(it) != tc.part || hasImage != (tc.part == PartImageURL) || !strings.Contains(msg.MultiContent[0].Text, it.MediaURI) {
				t.Errorf("request %+v", msg)
			}
			if d := out.Details.(Details); d.MediaPart != tc.part || d.CaptionFrom != "model" || d.CaptionPrompt != CaptionPromptVersion {
				t.Errorf("details %+v", d)
			}
			ref, ok := Task{}.Reference(sample(it))
			if !ok || ref.Content != it.Caption || !reflect.DeepEqual(ref.Messages, f.Requests()[0].Messages) {
				t.Errorf("reference %+v", ref)
			}
		})
	}
}

// TestCaptionsFile: the model captions/<key> reads captions from a file in
// the store, never calling a captioner; an item the file lacks, or a file
// that is missing or broken, is a bad sample.
func TestCaptionsFile(t *testing.T) {
	ctx := context.Background()
	store := blobtest.NewMemory()
	put := func(key, body string) {
		if err := store.Put(ctx, key, strings.NewReader(body), int64(len(body))); err != nil {
			t.Fatal(err)
		}
	}
	put("in/good.jsonl", `{"item_id": "other", "caption": "x"}`+"\n\n"+`{"item_id": "mu-x", "caption": "A violin plays."}`+"\n")
	put("in/lacking.jsonl", `{"item_id": "other", "caption": "x"}`+"\n")
	put("in/broken.jsonl", `{"item_id": "mu-x", "text": "x"}`+"\n")
	put("in/twice.jsonl", `{"item_id": "mu-x", "caption": "a"}`+"\n"+`{"item_id": "mu-x", "caption": "b"}`+"\n")
	task := NewTask(store)
	for _, tc := range []struct {
		key, bad string
	}{
		{"in/good.jsonl", ""},
		{"in/lacking.jsonl", "has no caption for item mu-x"},
		{"in/broken.jsonl", `in/broken.jsonl:1: not a {"item_id", "caption"} object`},
		{"in/twice.jsonl", "in/twice.jsonl:2: item mu-x has a second caption"},
		{"in/missing.jsonl", "does not exist"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			f := &fake{reply: oracleJudge}
			out, err := task.Evaluate(ctx, scorers.Env{Models: f, Model: CaptionsPrefix + tc.key}, sample(testItem(t)))
			if tc.bad != "" {
				if !errors.Is(err, scorers.ErrBadSample) || !strings.Contains(err.Error(), tc.bad) || len(f.Requests()) != 0 {
					t.Errorf("err = %v after %d calls", err, len(f.Requests()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := out.Details.(Details)
			if out.Response != "A violin plays." || d.CaptionFrom != "in/good.jsonl" || len(d.CaptionFileSHA256) != 64 || len(f.Requests()) != 1 || f.Requests()[0].Model != DefaultJudge {
				t.Errorf("response %q, details %+v, calls %d", out.Response, d, len(f.Requests()))
			}
			if out.Metrics[MetricCorrect] != 1 || out.Metrics[MetricOmitted] != 2 {
				t.Errorf("metrics %v", out.Metrics)
			}
		})
	}
	if _, err := (Task{}).Evaluate(ctx, scorers.Env{Models: &fake{}, Model: CaptionsPrefix + "in/good.jsonl"}, sample(testItem(t))); err == nil || errors.Is(err, scorers.ErrBadSample) {
		t.Errorf("a task without a store: err = %v, want an infrastructure error", err)
	}
}

func TestFill(t *testing.T) {
	blanks := []schemas.ClozeBlank{
		{Blank: 1, Options: []string{"red", "dark red", "green"}, Answer: "dark red"},
		{Blank: 2, Options: []string{"ice", "advice"}, Answer: "ice"},
		{Blank: 3, Options: []string{"cat", "dog"}, Answer: "dog"},
	}
	for _, tc := range []struct {
		name, caption, passage string
		want                   []string
	}{
		{"the longest occurring option wins", "A dark red door.", "[BLANK_1] [BLANK_2] [BLANK_3]", []string{"dark red", NotGiven, NotGiven}},
		{"whole words only, case ignored", "Some ADVICE about a Dog.", "[BLANK_1] [BLANK_2] [BLANK_3]", []string{NotGiven, "advice", "dog"}},
		{"two options of the same length: the first", "a cat and a dog", "[BLANK_1] [BLANK_2] [BLANK_3]", []string{NotGiven, NotGiven, "cat"}},
		{"the passage is read too", "", "The [BLANK_3] chases a cat; [BLANK_1] [BLANK_2]", []string{NotGiven, NotGiven, "cat"}},
		{"the markers do not join words", "", "[BLANK_1]ice [BLANK_2] [BLANK_3]", []string{NotGiven, "ice", NotGiven}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range Fill(tc.caption, tc.passage, blanks) {
				got = append(got, f.Choice)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Fill = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	b := schemas.ClozeBlank{Blank: 1, Options: []string{"cello", "violin", "A"}, Answer: "violin"}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"B", "violin", true}, {"b", "violin", true}, {"(B)", "violin", true}, {"B.", "violin", true}, {" b) ", "violin", true},
		{"A", "cello", true}, {"D", NotGiven, true}, {"not  given", NotGiven, true}, {"Violin", "violin", true},
		{"E", "", false}, {"viola", "", false}, {"B, C", "", false},
	} {
		if got, ok := Choose(b, tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Choose(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCheckBlanks(t *testing.T) {
	ok := []schemas.ClozeBlank{{Blank: 1, Options: []string{"a1", "b1"}, Answer: "a1"}, {Blank: 2, Options: []string{"a2", "b2"}, Answer: "b2"}}
	with := func(f func(b []schemas.ClozeBlank)) []schemas.ClozeBlank {
		var c []schemas.ClozeBlank
		if err := json.Unmarshal([]byte(mustJSON(t, ok)), &c); err != nil {
			t.Fatal(err)
		}
		f(c)
		return c
	}
	for _, tc := range []struct {
		name, passage string
		blanks        []schemas.ClozeBlank
		bad           string
	}{
		{"fine", "x [BLANK_1] y [BLANK_2]", ok, ""},
		{"out of order", "x [BLANK_2] y [BLANK_1]", ok, "marker 1 is [BLANK_2]"},
		{"a marker twice", "[BLANK_1] [BLANK_1] [BLANK_2]", ok, "marker 2 is [BLANK_1]"},
		{"a blank unmarked", "x [BLANK_1]", ok, "marks 1 blanks, the item has 2"},
		{"one option", "[BLANK_1] [BLANK_2]", with(func(b []schemas.ClozeBlank) { b[0].Options = []string{"a1"} }), "1 options"},
		{"Not Given listed", "[BLANK_1] [BLANK_2]", with(func(b []schemas.ClozeBlank) { b[0].Options[1] = "not given" }), "every blank offers"},
		{"an option twice", "[BLANK_1] [BLANK_2]", with(func(b []schemas.ClozeBlank) { b[0].Options[1] = " A1" }), "twice"},
		{"answer not an option", "[BLANK_1] [BLANK_2]", with(func(b []schemas.ClozeBlank) { b[1].Answer = "c2" }), "not among its options"},
		{"misnumbered", "[BLANK_1] [BLANK_2]", with(func(b []schemas.ClozeBlank) { b[1].Blank = 3 }), "numbered 3"},
		{"no blanks", "text", nil, "no blanks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckBlanks(tc.passage, tc.blanks)
			if tc.bad == "" && err != nil || tc.bad != "" && (!errors.Is(err, ErrBlanks) || !strings.Contains(fmt.Sprint(err), tc.bad)) {
				t.Errorf("err = %v, want %q", err, tc.bad)
			}
		})
	}
}

// TestPrompts pins the caption and fill prompts (testdata/prompts.golden;
// -update rewrites it). A change to them must bump their versions.
func TestPrompts(t *testing.T) {
	it := testItem(t)
	var b bytes.Buffer
	dump := func(title string, msgs []openai.ChatCompletionMessage) {
		fmt.Fprintf(&b, "===== %s\n", title)
		for _, m := range msgs {
			fmt.Fprintf(&b, "--- %s\n", m.Role)
			if m.Content != "" {
				b.WriteString(m.Content + "\n")
			}
			for _, p := range m.MultiContent {
				if p.ImageURL != nil {
					fmt.Fprintf(&b, "[%s %s]\n", p.Type, p.ImageURL.URL)
				} else {
					fmt.Fprintf(&b, "[%s]\n%s\n", p.Type, p.Text)
				}
			}
		}
	}
	dump(CaptionPromptVersion+" (audio)", CaptionMessages(it))
	img := *it
	img.MediaKind, img.MediaType, img.MediaURI = schemas.MediaVisual, "image/jpeg", "https://media.example.invalid/v.jpg"
	dump(CaptionPromptVersion+" (image)", CaptionMessages(&img))
	dump(FillPromptVersion, FillMessages("A violin plays.", it.Passage, testBlanks()))
	fmt.Fprintf(&b, "===== oracle\n%s\n", FillOracle("A violin plays.", it.Passage, testBlanks()))
	path := filepath.Join("testdata", "prompts.golden")
	golden.Check(t, path, b.String(), *update, "prompts changed: bump their versions, then go test -update")
}
