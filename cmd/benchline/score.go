package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/benchmark"
	"github.com/benchline/benchline/internal/sandbox"
)

// newScoreCmd is `benchline score <name>`: one subcommand per line scorer a
// benchmark registers (JSON lines in, one JSON line out per input, in
// order; no model calls).
func newScoreCmd(reg *benchmark.Registry) *cobra.Command {
	score := &cobra.Command{Use: "score", Short: "Score given model outputs with a benchmark's deterministic checker (no model calls)"}
	for _, ls := range reg.Scorers() {
		score.AddCommand(newLineScorerCmd(ls))
	}
	return score
}

func newLineScorerCmd(ls benchmark.LineScorer) *cobra.Command {
	var (
		input, output string
		env           benchmark.ScoreEnv
	)
	cmd := &cobra.Command{
		Use:          ls.Name,
		Short:        ls.Short,
		Long:         ls.Long,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r io.Reader = cmd.InOrStdin()
			if input != "" && input != "-" {
				f, err := os.Open(input)
				if err != nil {
					return fmt.Errorf("score %s: %w", ls.Name, err)
				}
				defer f.Close()
				r = f
			}
			var w io.Writer = cmd.OutOrStdout()
			if output != "" && output != "-" {
				f, err := os.Create(output)
				if err != nil {
					return fmt.Errorf("score %s: %w", ls.Name, err)
				}
				defer f.Close()
				w = f
			}
			if ls.Sandboxed {
				sb, err := sandbox.New(sandbox.Config{})
				if err != nil {
					return fmt.Errorf("score %s: %w", ls.Name, err)
				}
				defer sb.Close()
				env.Sandbox = sb
			}
			start := time.Now()
			err := ls.Score(cmd.Context(), env, r, w)
			if ls.Sandboxed {
				fmt.Fprintf(cmd.ErrOrStderr(), "score %s: done in %s\n", ls.Name, time.Since(start).Round(time.Millisecond))
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "-", "input JSON-lines file (- for stdin)")
	cmd.Flags().StringVarP(&output, "output", "o", "-", "output JSON-lines file (- for stdout)")
	if ls.Sandboxed {
		cmd.Flags().IntVarP(&env.Concurrency, "concurrency", "j", runtime.NumCPU(), "inputs scored at a time")
		cmd.Flags().IntVar(&env.Attempts, "attempts", 3, "tries per input on sandbox errors")
	}
	return cmd
}
