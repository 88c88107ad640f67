package ifevalcode_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/scorers/ifevalcode"
)

// BenchmarkScoreLines measures ScoreLines (what `benchline score
// ifevalcode` runs) on each language's fixture references, 2 responses in
// flight; each response is two sandboxed programs (correctness, then the
// instruction check). Run:
//
//	go test -run '^$' -bench ScoreLines -benchtime 3x ./scorers/ifevalcode/
func BenchmarkScoreLines(b *testing.B) {
	s := newScorer(b, ifevalcode.Options{Concurrency: 2})
	items := fixtureItems(b)
	for _, l := range dsifevalcode.Languages {
		var in strings.Builder
		n := 0
		for _, it := range items {
			if it.ProgrammingLanguage != l {
				continue
			}
			line, _ := json.Marshal(map[string]any{"id": it.ID, "programming_language": l,
				"check_correctness": it.CheckCorrectness, "check_instruction": it.CheckInstruction, "response": *it.ReferenceSolution})
			in.Write(line)
			in.WriteByte('\n')
			n++
		}
		b.Run(l, func(b *testing.B) {
			for b.Loop() {
				if err := s.ScoreLines(context.Background(), strings.NewReader(in.String()), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "responses/s")
		})
	}
}
