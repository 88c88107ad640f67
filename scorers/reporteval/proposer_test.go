package reporteval

import (
	"encoding/json"
	"strings"
	"testing"
)

// proposerRoundTrip is what the asymmetric mode does with the baseline
// proposer's reply: baseline/judge sends the oracle verbatim, and the task
// parses it and validates it (an empty claim is a judge error).
func proposerRoundTrip(t *testing.T, report string) ProposedClaims {
	t.Helper()
	b, err := json.Marshal(ClaimsOracle(report))
	if err != nil {
		t.Fatal(err)
	}
	var got ProposedClaims
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the task rejects the baseline proposer's reply: %v", err)
	}
	return got
}

// TestProposerNeverEmitsAnEmptyClaim (issue 34): a cited "sentence" that
// runs over a table and ends inside the next section's heading (the
// heading's own period ends it) left nothing after its last heading line,
// and the proposer emitted an empty claim the task rejects.
func TestProposerNeverEmitsAnEmptyClaim(t *testing.T) {
	for _, tc := range []struct {
		name, report string
		want         []ProposedClaim
	}{
		{"table cites, then a heading with a period",
			"# R\n\nIntro sentence cites one [1].\n\n| Metric | Value | Source |\n| :--- | :--- | :--- |\n| **Rate** | 21.7% | `[2]` |\n| **Price** | $3/ton | `[1]` |\n\n## The Case of the U.S. Credits\n\nMore text.\n\n## References\n[1],https://a.example/x\n[2],https://b.example/y\n",
			[]ProposedClaim{{Claim: "Intro sentence cites one.", Refs: []int{1}},
				{Claim: "| Metric | Value | Source |\n| :--- | :--- | :--- |\n| **Rate** | 21.7% | `` |\n| **Price** | $3/ton | `` |", Refs: []int{2, 1}}}},
		{"heading before the sentence (kept as before)",
			"# R\n\n## Section\nThe sentence after a heading [1].\n\n## References\n[1],https://a.example/x\n",
			[]ProposedClaim{{Claim: "The sentence after a heading.", Refs: []int{1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := proposerRoundTrip(t, tc.report)
			if len(got.Claims) != len(tc.want) {
				t.Fatalf("%d claims %+v, want %d", len(got.Claims), got.Claims, len(tc.want))
			}
			for i := range tc.want {
				if got.Claims[i].Claim != tc.want[i].Claim || !slicesEqual(got.Claims[i].Refs, tc.want[i].Refs) {
					t.Errorf("claim %d = %+v\nwant %+v", i+1, got.Claims[i], tc.want[i])
				}
			}
		})
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProposerOnTheRealReports: the baseline proposer's reply for every
// report of the original's release (shared/data) parses and validates,
// 2fae8526… (whose claim 18 was empty) among them.
func TestProposerOnTheRealReports(t *testing.T) {
	found := false
	for _, r := range loadReports(t) {
		id := FileID(r.Topic)
		if strings.HasPrefix(id, "2fae8526") {
			found = true
		}
		t.Run(id, func(t *testing.T) {
			for i, c := range proposerRoundTrip(t, r.Report).Claims {
				if strings.TrimSpace(c.Claim) == "" || len(c.Refs) == 0 {
					t.Errorf("claim %d: %+v", i+1, c)
				}
			}
		})
	}
	if !found {
		t.Error("report 2fae8526… is not in the shared data")
	}
}
