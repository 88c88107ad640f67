package reporteval

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/benchline/benchline/internal/judge"
)

func ptr(v float64) *float64 { return &v }

func TestScoreDecodes(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{`3`, 3, false},
		{`2.5`, 2.5, false},
		{`"3"`, 3, false},
		{`" 4 "`, 4, false},
		{`-1`, -1, false},
		{`"three"`, 0, true},
		{`"3 points"`, 0, true},
		{`true`, 0, true},
		{`"NaN"`, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var s Score
			err := s.UnmarshalJSON([]byte(tc.in))
			if tc.err {
				if !errors.Is(err, ErrReply) {
					t.Errorf("err = %v, want ErrReply", err)
				}
				return
			}
			if err != nil || float64(s) != tc.want {
				t.Errorf("got %v, %v; want %v", float64(s), err, tc.want)
			}
		})
	}
}

// TestQualityReplyParsing: the original's keys, read tolerantly (fences,
// prose, numbers as strings, a Reason object) but strictly (every key,
// nothing else).
func TestQualityReplyParsing(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		overall float64
		err     bool
	}{
		{"plain", `{"Reason":"ok","Comprehensiveness_Score":3,"Coherence_Score":2,"Clarity_Score":2,"Insightfulness_Score":1,"Overall_Score":2}`, 2, false},
		{"fenced with prose and strings", "Here you go.\n```json\n" +
			`{"Reason":{"Comprehensiveness_Score":"deep"},"Comprehensiveness_Score":"4","Coherence_Score":"3","Clarity_Score":3,"Insightfulness_Score":3,"Overall_Score":"3"}` +
			"\n```\nThanks.", 3, false},
		{"a key missing", `{"Reason":"ok","Comprehensiveness_Score":3,"Coherence_Score":2,"Clarity_Score":2,"Insightfulness_Score":1}`, 0, true},
		{"a null reason", `{"Reason":null,"Comprehensiveness_Score":3,"Coherence_Score":2,"Clarity_Score":2,"Insightfulness_Score":1,"Overall_Score":2}`, 0, true},
		{"an unknown key", `{"Reason":"ok","Comprehensiveness_Score":3,"Coherence_Score":2,"Clarity_Score":2,"Insightfulness_Score":1,"Overall_Score":2,"Bonus":1}`, 0, true},
		{"not a number", `{"Reason":"ok","Comprehensiveness_Score":"high","Coherence_Score":2,"Clarity_Score":2,"Insightfulness_Score":1,"Overall_Score":2}`, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r QualityReply
			err := judge.Decode(tc.reply, &r)
			if tc.err {
				if !errors.Is(err, judge.ErrUnparseable) {
					t.Errorf("err = %v, want unparseable", err)
				}
				return
			}
			if err != nil || float64(r.Overall) != tc.overall {
				t.Errorf("got %+v, %v", r, err)
			}
		})
	}
}

// TestPanelQuality: fixed verdicts, clamped to 0–4 (and the keys clamping
// moved recorded), averaged over the judges that answered; a panel whose
// every judge failed has no quality.
func TestPanelQuality(t *testing.T) {
	q := func(c, coh, cl, ins, o float64) *QualityReply {
		return &QualityReply{Reason: []byte(`"r"`), Comprehensiveness: Score(c), Coherence: Score(coh), Clarity: Score(cl),
			Insightfulness: Score(ins), Overall: Score(o)}
	}
	tests := []struct {
		name        string
		replies     []*QualityReply
		wantPanel   map[string]float64
		wantClamped [][]string
	}{
		{"one judge in range", []*QualityReply{q(3, 2, 2, 1, 2)},
			map[string]float64{"comprehensiveness": 3, "coherence": 2, "clarity": 2, "insightfulness": 1, "quality": 2}, nil},
		{"clamped: 5 to 4, -1 to 0", []*QualityReply{q(5, -1, 2, 4.5, 2.5)},
			map[string]float64{"comprehensiveness": 4, "coherence": 0, "clarity": 2, "insightfulness": 4, "quality": 2.5},
			[][]string{{"Comprehensiveness_Score", "Coherence_Score", "Insightfulness_Score"}}},
		// (3 + 4) / 2 = 3.5 and (1 + 0) / 2 = 0.5: the failed judge is
		// left out, not counted as 0.
		{"a judge error is left out", []*QualityReply{q(3, 2, 2, 1, 3), nil, q(4, 2, 2, 0, 4)},
			map[string]float64{"comprehensiveness": 3.5, "coherence": 2, "clarity": 2, "insightfulness": 0.5, "quality": 3.5}, nil},
		{"every judge failed", []*QualityReply{nil, nil}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scores, clamped, panel, ok := PanelQuality(tc.replies)
			if ok != (tc.wantPanel != nil) || !reflect.DeepEqual(panel, tc.wantPanel) {
				t.Errorf("panel = %v (%v), want %v", panel, ok, tc.wantPanel)
			}
			if tc.wantClamped != nil && !reflect.DeepEqual(clamped, tc.wantClamped) {
				t.Errorf("clamped = %v, want %v", clamped, tc.wantClamped)
			}
			if tc.wantClamped == nil && clamped != nil {
				t.Errorf("clamped = %v, want none", clamped)
			}
			for i, r := range tc.replies {
				if (r == nil) != (scores[i] == nil) {
					t.Errorf("judge %d: scores %v", i, scores[i])
				}
			}
		})
	}
}

// TestRedundancyScore: the mean over the pairs with a panel score; failed
// pairs are left out, and a report without one has no score (not 0).
func TestRedundancyScore(t *testing.T) {
	tests := []struct {
		name   string
		pairs  []Pair
		want   float64
		judged int
		ok     bool
	}{
		{"no pairs", nil, 0, 0, false},
		{"every pair failed", []Pair{{}, {}}, 0, 0, false},
		// (4 + 1) / 2: the failed pair counts neither as 0 nor as a pair.
		{"a failed pair is left out", []Pair{{Score: ptr(4)}, {}, {Score: ptr(1)}}, 2.5, 2, true},
		{"panel means", []Pair{{Score: ptr(3.5)}, {Score: ptr(2)}, {Score: ptr(0)}}, 5.5 / 3, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, judged, ok := RedundancyScore(tc.pairs)
			if ok != tc.ok || judged != tc.judged || math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("RedundancyScore = %v, %d, %v; want %v, %d, %v", got, judged, ok, tc.want, tc.judged, tc.ok)
			}
		})
	}
	// A pair's panel score is the mean of its judges, judge errors left
	// out.
	if m, ok := PanelMean([]*float64{ptr(4), nil, ptr(1)}); !ok || m != 2.5 {
		t.Errorf("PanelMean = %v, %v", m, ok)
	}
}

// TestTally: checks whose source could not be had are counted apart and
// never in the supported/contradicted shares; nor are judge errors.
func TestTally(t *testing.T) {
	checks := []Check{
		{Label: "1"}, {Label: "1"}, {Label: "0"}, {Label: "-1"},
		{Unverifiable: "not_found"}, {Unverifiable: "timeout"}, {Unverifiable: NoURL},
		{Labels: []string{"", ""}}, // every judge failed
	}
	got := Tally(checks)
	want := FactualityTally{Checks: 8, Unverifiable: 3, JudgeErrors: 1, Judged: 4, Supported: 2, Partial: 1, Contradicted: 1}
	if got != want {
		t.Fatalf("Tally = %+v, want %+v", got, want)
	}
	m := got.Metrics("_asym")
	wantM := map[string]float64{
		"factuality_checks_asym": 8, "factuality_unverifiable_asym": 3.0 / 8,
		"factuality_asym": 0.5, "factuality_partial_asym": 0.25, "factuality_contradicted_asym": 0.25,
	}
	if !reflect.DeepEqual(m, wantM) {
		t.Errorf("Metrics = %v, want %v", m, wantM)
	}
	// Only unreachable sources: no share of supported, not 0.
	m = Tally([]Check{{Unverifiable: "unreachable"}}).Metrics("")
	if _, ok := m[MetricFactuality]; ok || m[MetricFactualityUnverifiable] != 1 || m[MetricFactualityChecks] != 1 {
		t.Errorf("only unreachable: %v", m)
	}
	if m := (FactualityTally{}).Metrics(""); len(m) != 1 || m[MetricFactualityChecks] != 0 {
		t.Errorf("no checks: %v", m)
	}
}

func TestChecksOf(t *testing.T) {
	refs := map[int]string{1: "https://a.org/", 2: "https://b.org/", 3: "https://a.org/"}
	claims := []ClaimRecord{{Refs: []int{1, 2}}, {Refs: []int{1, 3}}, {Refs: []int{7}}, {}}
	want := []Check{
		{Claim: 0, Ref: 1, URL: "https://a.org/"}, {Claim: 0, Ref: 2, URL: "https://b.org/"},
		{Claim: 1, Ref: 1, URL: "https://a.org/"}, // [3] is the same URL: one check
		{Claim: 2, Ref: 7, Unverifiable: NoURL},
		{Claim: 3, Unverifiable: NoRef},
	}
	if got := checksOf(claims, refs); !reflect.DeepEqual(got, want) {
		t.Errorf("checksOf = %+v\nwant %+v", got, want)
	}
}

func TestFactReplyValidate(t *testing.T) {
	for _, tc := range []struct {
		reply string
		label string
		err   bool
	}{
		{`{"is_factual": 1, "sentence_support": "It says so."}`, "1", false},
		{`{"is_factual": "-1"}`, "-1", false},
		{`{"is_factual": 0, "sentence_support": ["a", "b"]}`, "0", false},
		{`{"is_factual": 2, "sentence_support": ""}`, "", true},
		{`{"is_factual": 0.5}`, "", true},
		{`{"sentence_support": "x"}`, "", true},
	} {
		var r FactReply
		err := judge.Decode(tc.reply, &r)
		if (err != nil) != tc.err || (err == nil && r.Label() != tc.label) {
			t.Errorf("%s: label %q, err %v", tc.reply, r.Label(), err)
		}
	}
}

func TestOracles(t *testing.T) {
	t.Run("repetition score steps", func(t *testing.T) {
		for _, tc := range []struct {
			overlap float64
			want    int
		}{{0, 4}, {0.099, 4}, {0.10, 3}, {0.2, 2}, {0.35, 1}, {0.49, 1}, {0.5, 0}, {1, 0}} {
			if got := RepetitionScore(tc.overlap); got != tc.want {
				t.Errorf("RepetitionScore(%v) = %d, want %d", tc.overlap, got, tc.want)
			}
		}
	})
	t.Run("word overlap", func(t *testing.T) {
		// Words of 4+ letters: {river, flows, north} and {river, flows,
		// south}: 2 shared of 4.
		if got := WordOverlap("The river flows north.", "A river flows SOUTH!"); got != 0.5 {
			t.Errorf("WordOverlap = %v, want 0.5", got)
		}
		if got := WordOverlap("a b", "c"); got != 0 {
			t.Errorf("no words: %v", got)
		}
	})
	t.Run("quality features", func(t *testing.T) {
		for _, tc := range []struct {
			f    QualityFeatures
			want []int
		}{
			{QualityFeatures{}, []int{0, 0, 0, 0, 0}},
			{QualityFeatures{Words: 700, Sections: 8, Sources: 5, Overlap: 0.12}, []int{3, 4, 3, 3, 3}},
			// Repetition caps clarity; the mean (3+4+0+3)/4 = 2.5 rounds up.
			{QualityFeatures{Words: 700, Sections: 8, Sources: 5, Overlap: 0.54}, []int{3, 4, 0, 3, 3}},
			{QualityFeatures{Words: 2000, Sections: 2, Sources: 9, Overlap: 0}, []int{4, 1, 1, 4, 3}},
		} {
			if got := tc.f.Scores(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%+v: Scores = %v, want %v", tc.f, got, tc.want)
			}
		}
	})
	t.Run("fact oracle", func(t *testing.T) {
		const src = "# Gutenberg\n\nThe Gutenberg Bible was completed around 1455. It was printed in an edition of about 180 copies.\n"
		for _, tc := range []struct {
			claim string
			want  Score
		}{
			{"The Gutenberg Bible was completed around 1455 [1].", 1},
			{"The Gutenberg Bible was printed in about 500 copies [1].", -1}, // 500 is not in the source
			{"Gutenberg printed bibles, calendars, grammars and indulgences for wealthy patrons [1].", 0},
			{"Venice became the leading centre of the trade [2].", -1},
			{"[1].", 0},
		} {
			if got := FactOracle(tc.claim, src); got.IsFactual != tc.want || got.Validate() != nil {
				t.Errorf("FactOracle(%q) = %v (%s), want %v", tc.claim, got.IsFactual, got.SentenceSupport, tc.want)
			}
		}
	})
	t.Run("claims oracle", func(t *testing.T) {
		report := "# T\n\n## One\nIt rose 9.5 percent [1]. Both agree [1,2].\n\n## References\n[1],https://a.org/\n[2],https://b.org/\n"
		want := ProposedClaims{Claims: []ProposedClaim{{Claim: "It rose 9.5 percent.", Refs: []int{1}}, {Claim: "Both agree.", Refs: []int{1, 2}}}}
		if got := ClaimsOracle(report); !reflect.DeepEqual(got, want) {
			t.Errorf("ClaimsOracle = %+v", got)
		}
		if got := ClaimsOracle("nothing cited"); got.Claims == nil || len(got.Claims) != 0 {
			t.Errorf("no claims: %+v (must encode as [], not null)", got)
		}
	})
}
