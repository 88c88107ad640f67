package main

import (
	"github.com/spf13/cobra"

	"github.com/benchline/benchline/scorers/bfcl"
)

// newScoreBFCLCmd is `benchline score bfcl-ast`: the BFCL AST checker over
// JSON lines on stdin (see bfcl.ScoreLines for the line format).
func newScoreBFCLCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bfcl-ast",
		Short: "Score BFCL function-calling outputs with the AST checker (JSON lines on stdin, one verdict line per input on stdout)",
		Long: `Reads JSON lines {"id", "category", "language", "functions", "model_output",
"possible_answer"} on stdin, where model_output is BFCL's decoded model output
(a list of {func_name: {arg: value}}) and possible_answer is the item's
ground_truth, and writes one JSON line {"id", "valid", "error_type"} per input
line to stdout. error_type is the BFCL reference checker's error type ("" when
valid). A malformed input line is scored valid=false with an "input_error:..."
type, and the command exits non-zero after scoring all lines.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bfcl.ScoreLines(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}
