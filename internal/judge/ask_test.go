package judge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/benchline/benchline/internal/modelapi"
)

// scripted answers each call with the next reply (or error) and records
// the requests.
type scripted struct {
	replies []string
	errs    []error
	got     []modelapi.Request
}

func (s *scripted) Complete(_ context.Context, req modelapi.Request) (modelapi.Response, error) {
	i := len(s.got)
	s.got = append(s.got, req)
	if i < len(s.errs) && s.errs[i] != nil {
		return modelapi.Response{}, s.errs[i]
	}
	return modelapi.Response{
		Choices: []modelapi.Choice{{Content: s.replies[i]}},
		Usage:   modelapi.Usage{PromptTokens: 100, CompletionTokens: 10, Attempts: 1},
	}, nil
}

var _ Completer = (*scripted)(nil)

func TestAsk(t *testing.T) {
	const good = `{"verdicts":[{"id":"r1","met":true}]}`
	const bad = `I think r1 is met.`
	errDown := errors.New("gateway down")
	tests := []struct {
		name         string
		replies      []string
		errs         []error
		wantAttempts int
		wantFailed   bool
		wantReply    string
		wantErr      error
	}{
		{"parses at once", []string{good}, nil, 1, false, good, nil},
		{"retried once, then parses", []string{bad, "```json\n" + good + "\n```"}, nil, 2, false, "```json\n" + good + "\n```", nil},
		{"unparseable twice: a judge error", []string{bad, bad + " again"}, nil, 2, true, bad + " again", nil},
		{"gateway error on the first call", []string{""}, []error{errDown}, 0, false, "", errDown},
		{"gateway error on the retry", []string{bad, ""}, []error{nil, errDown}, 1, true, bad, errDown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &scripted{replies: tc.replies, errs: tc.errs}
			req := Request{
				Judge: "baseline/judge", PromptVersion: "test/1",
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "judge this"}},
				NoCache:  true, Oracle: `{"verdicts":[]}`,
			}
			var v rubricReply
			got, err := Ask(context.Background(), c, req, &v)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Ask error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil && !strings.HasPrefix(err.Error(), "judge: ask baseline/judge: ") {
				t.Errorf("error %q does not name the judge", err)
			}
			if got.Attempts != tc.wantAttempts || got.Failed() != tc.wantFailed || got.Reply != tc.wantReply {
				t.Errorf("Verdict = %+v; want attempts %d, failed %v, reply %q", got, tc.wantAttempts, tc.wantFailed, tc.wantReply)
			}
			if got.Judge != "baseline/judge" || got.PromptVersion != "test/1" {
				t.Errorf("Verdict does not record the judge and prompt version: %+v", got)
			}
			if got.Usage.Calls != int64(got.Attempts) || got.Usage.PromptTokens != 100*int64(got.Attempts) {
				t.Errorf("Usage = %+v after %d calls", got.Usage, got.Attempts)
			}
			for i, r := range c.got {
				if r.SampleIndex != i || r.Model != "baseline/judge" || !r.NoCache || r.Params.ResponseFormat != nil || r.Oracle != req.Oracle {
					t.Errorf("call %d: request %+v", i, r)
				}
			}
			if tc.wantErr == nil && !tc.wantFailed {
				if string(got.Parsed) != `{"verdicts":[{"id":"r1","met":true}]}` || got.Error != "" {
					t.Errorf("Parsed = %s, Error = %q", got.Parsed, got.Error)
				}
				if len(v.Verdicts) != 1 || !v.Verdicts[0].Met {
					t.Errorf("target = %+v", v)
				}
			}
			if tc.wantFailed && (got.Parsed != nil || !strings.Contains(got.Error, "judge: unparseable reply: no JSON object")) {
				t.Errorf("failed verdict: Parsed = %s, Error = %q", got.Parsed, got.Error)
			}
		})
	}
}

func TestAskSendsSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	c := &scripted{replies: []string{`{"verdicts":[{"id":"r1","met":false}]}`}}
	var v rubricReply
	_, err := Ask(context.Background(), c, Request{Judge: "j", Schema: &Schema{Name: "verdicts", JSON: schema, Strict: true}}, &v)
	if err != nil {
		t.Fatal(err)
	}
	rf := c.got[0].Params.ResponseFormat
	if rf == nil || rf.Type != openai.ChatCompletionResponseFormatTypeJSONSchema || rf.JSONSchema.Name != "verdicts" || !rf.JSONSchema.Strict {
		t.Fatalf("ResponseFormat = %+v", rf)
	}
	b, _ := json.Marshal(rf)
	if !strings.Contains(string(b), `"schema":{"type":"object"}`) {
		t.Errorf("response format encodes as %s", b)
	}
}

func TestAskRecordJSON(t *testing.T) {
	c := &scripted{replies: []string{"no", "still no"}}
	var v rubricReply
	got, err := Ask(context.Background(), c, Request{Judge: "j", PromptVersion: "p/2"}, &v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"judge":"j","prompt_version":"p/2","reply":"still no","error":"judge: unparseable reply: no JSON object in the reply (reply \"still no\")","attempts":2}`
	if string(b) != want {
		t.Errorf("stored record\n%s\nwant\n%s", b, want)
	}
}

// lastLetter is a verdict read by a rule of its own: the reply's last
// character, Y or N.
type lastLetter struct {
	Yes bool `json:"yes"`
}

func (l *lastLetter) DecodeReply(reply string) error {
	switch {
	case strings.HasSuffix(reply, "Y"):
		l.Yes = true
	case strings.HasSuffix(reply, "N"):
		l.Yes = false
	default:
		return errors.New("no Y or N at the end")
	}
	return nil
}

// TestAskReplyDecoder: a ReplyDecoder reads the raw reply (no JSON
// object needed); its error is a parse error, asked again once and then
// a judge error.
func TestAskReplyDecoder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replies  []string
		want     bool
		failed   bool
		attempts int
	}{
		{"reads the text", []string{"because...\nY"}, true, false, 1},
		{"retried once", []string{"hmm", "no.\nN"}, false, false, 2},
		{"a judge error", []string{"hmm", `{"yes": true}`}, false, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v lastLetter
			verdict, err := Ask(context.Background(), &scripted{replies: tc.replies}, Request{Judge: "x/j", PromptVersion: "t/1"}, &v)
			if err != nil {
				t.Fatal(err)
			}
			if verdict.Failed() != tc.failed || verdict.Attempts != tc.attempts || (!tc.failed && v.Yes != tc.want) {
				t.Fatalf("verdict %+v, value %+v; want failed %v after %d attempts, yes %v", verdict, v, tc.failed, tc.attempts, tc.want)
			}
			if tc.failed && !strings.Contains(verdict.Error, "no Y or N at the end") {
				t.Errorf("error %q does not say why", verdict.Error)
			}
			if !tc.failed && string(verdict.Parsed) == "" {
				t.Error("no parsed verdict recorded")
			}
		})
	}
}
