package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/scorers/ifevalcode"
)

// newScoreIFEvalCodeCmd returns `benchline score ifevalcode`: JSON lines
// {"id", "programming_language", "check_correctness", "check_instruction",
// "response"} in, one {"id", "correct", "instruction", "status", "detail"}
// line out per input, in input order. Both checks run in the sandbox.
func newScoreIFEvalCodeCmd() *cobra.Command {
	var (
		input, output string
		concurrency   int
		attempts      int
	)
	cmd := &cobra.Command{
		Use:   "ifevalcode",
		Short: "Score IFEvalCode responses: correctness and instruction checks in the sandbox",
		Long: `Reads JSON lines {"id", "programming_language", "check_correctness", "check_instruction",
"response"} (response is the model's whole reply) and writes one JSON line
{"id", "correct", "instruction", "status", "detail"} per input, in input order.

The correctness program is assembled from the reply's first fenced code block as
IFEvalCode's harness does for each language (python, java, cpp, csharp, typescript,
javascript, php, shell) and run in the sandbox; check_instruction(response) runs in
the sandbox with Python on the whole reply. <think>...</think> reasoning is stripped
first. status is ok, failed, timeout, compile-error or sandbox-error.

Exits non-zero when an input line is malformed or a line could not be scored
because of a sandbox failure (after retries); every input still gets its line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var r io.Reader = cmd.InOrStdin()
			if input != "" && input != "-" {
				f, err := os.Open(input)
				if err != nil {
					return fmt.Errorf("score ifevalcode: %w", err)
				}
				defer f.Close()
				r = f
			}
			var w io.Writer = cmd.OutOrStdout()
			if output != "" && output != "-" {
				f, err := os.Create(output)
				if err != nil {
					return fmt.Errorf("score ifevalcode: %w", err)
				}
				defer f.Close()
				w = f
			}
			sb, err := sandbox.New(sandbox.Config{})
			if err != nil {
				return fmt.Errorf("score ifevalcode: %w", err)
			}
			defer sb.Close()
			s := ifevalcode.New(sb, ifevalcode.Options{Concurrency: concurrency, Attempts: attempts})
			start := time.Now()
			err = s.ScoreLines(cmd.Context(), r, w)
			fmt.Fprintf(cmd.ErrOrStderr(), "score ifevalcode: done in %s\n", time.Since(start).Round(time.Millisecond))
			return err
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "-", "input JSON-lines file (- for stdin)")
	cmd.Flags().StringVarP(&output, "output", "o", "-", "output JSON-lines file (- for stdout)")
	cmd.Flags().IntVarP(&concurrency, "concurrency", "j", runtime.NumCPU(), "responses scored at a time")
	cmd.Flags().IntVar(&attempts, "attempts", 3, "tries per response on sandbox errors")
	return cmd
}
