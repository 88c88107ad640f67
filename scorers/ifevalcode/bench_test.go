package ifevalcode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	dsifevalcode "github.com/benchline/benchline/datasets/ifevalcode"
	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
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

// BenchmarkFixturePrograms runs the programs IFEvalCode scoring really runs
// (each interpreted language's fixture references assembled with their
// correctness tests, and the Python instruction checks of all fixtures)
// sandboxed and unsandboxed, 4 at a time on the machine's cores. It reports
// runs/s and the CPU time per run of this process and its children (which
// includes the sandboxed programs: the sandbox reaps them), so the two
// modes can be compared even on a busy machine. Run:
//
//	go test -run '^$' -bench FixturePrograms -benchtime 200x ./scorers/ifevalcode/
func BenchmarkFixturePrograms(b *testing.B) {
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		b.Fatalf("sandbox unavailable: %v", err)
	}
	b.Cleanup(func() { _ = sb.Close() })
	r := lang.NewRunner(sb, lang.Config{})
	groups := map[string][]lang.Program{}
	for _, it := range fixtureItems(b) {
		ref := *it.ReferenceSolution
		l := lang.Language(it.ProgrammingLanguage)
		if l == lang.Python || l == lang.JavaScript || l == lang.PHP || l == lang.Shell {
			src, err := ifevalcode.Assemble(l, ifevalcode.ExtractCode(ref), it.CheckCorrectness)
			if err != nil {
				b.Fatal(err)
			}
			groups[string(l)] = append(groups[string(l)], lang.Program{Lang: l, Source: src})
		}
		groups["instruction"] = append(groups["instruction"],
			lang.Program{Lang: lang.Python, Source: ifevalcode.InstructionProgram(ref, it.CheckInstruction)})
	}
	ctx := context.Background()
	for _, g := range []string{"python", "javascript", "php", "shell", "instruction"} {
		progs := groups[g]
		for _, mode := range []string{"sandbox", "plain"} {
			b.Run(g+"/"+mode, func(b *testing.B) {
				op := func(p lang.Program) error {
					if mode == "plain" {
						return r.RunUnsandboxed(ctx, p)
					}
					res, err := r.Run(ctx, p)
					if err == nil && res.Status != sandbox.StatusOK {
						err = fmt.Errorf("%s: %s", res.Status, res.Stderr)
					}
					return err
				}
				if err := op(progs[0]); err != nil { // warm the page cache
					b.Fatal(err)
				}
				var next atomic.Int64
				cpu0 := sandbox.ProcessCPU()
				b.ResetTimer()
				b.SetParallelism(2) // 2 x GOMAXPROCS goroutines
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := op(progs[int(next.Add(1))%len(progs)]); err != nil {
							b.Error(err)
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
				b.ReportMetric(float64((sandbox.ProcessCPU()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/run")
			})
		}
	}
}
