package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
	"github.com/spf13/cobra"
)

// sandboxRunOutput is the JSON printed by `benchline sandbox run`.
type sandboxRunOutput struct {
	lang.Result
	WallMS       int64                 `json:"wall_ms"`
	CPUMS        int64                 `json:"cpu_ms"`
	PeakMemoryKB int64                 `json:"peak_memory_kb"`
	CgroupVer    int                   `json:"cgroup_version"`
	Error        string                `json:"error,omitempty"`
	Compile      *sandboxCompileOutput `json:"compile,omitempty"`
}

type sandboxCompileOutput struct {
	sandbox.Result
	WallMS       int64 `json:"wall_ms"`
	CPUMS        int64 `json:"cpu_ms"`
	PeakMemoryKB int64 `json:"peak_memory_kb"`
}

// newSandboxCmd returns `benchline sandbox`, whose `run` subcommand runs one
// program in the sandbox and prints its result as one JSON object.
func newSandboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run untrusted programs in the bubblewrap sandbox",
	}
	var (
		language string
		timeout  float64
		memoryMB int64
		stdin    string
	)
	run := &cobra.Command{
		Use:   "run --lang LANG [--timeout S] [--memory MB] FILE",
		Short: "Compile (if needed) and run FILE; print the result as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var langs []string
			for _, l := range lang.Languages() {
				langs = append(langs, string(l))
			}
			if err := errors.Join(oneOf("lang", []string{language}, langs...), checkFlags(cmd,
				positiveSeconds(cmd, "timeout", timeout),
				flagRule{"memory", !cmd.Flags().Changed("memory") || (memoryMB > 0 && memoryMB <= 1<<20), "want a positive number of MiB (at most 1048576)"},
			)); err != nil {
				return fmt.Errorf("sandbox run: %w", err)
			}
			src, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("sandbox run: %w", err)
			}
			sb, err := sandbox.New(sandbox.Config{})
			if err != nil {
				return fmt.Errorf("sandbox run: %w", err)
			}
			defer sb.Close()
			p := lang.Program{Lang: lang.Language(language), Source: string(src), Stdin: stdin}
			if cmd.Flags().Changed("timeout") {
				p.Limits.WallTime = time.Duration(timeout * float64(time.Second))
			}
			if cmd.Flags().Changed("memory") {
				p.Limits.MemoryBytes = memoryMB << 20
			}
			res, runErr := lang.NewRunner(sb, lang.Config{}).Run(cmd.Context(), p)
			out := sandboxRunOutput{Result: res, WallMS: res.Wall.Milliseconds(), CPUMS: res.CPU.Milliseconds(),
				PeakMemoryKB: res.PeakMemoryBytes >> 10, CgroupVer: sb.CgroupVersion()}
			if c := res.Compile; c != nil {
				out.Compile = &sandboxCompileOutput{Result: *c, WallMS: c.Wall.Milliseconds(), CPUMS: c.CPU.Milliseconds(),
					PeakMemoryKB: c.PeakMemoryBytes >> 10}
			}
			if runErr != nil {
				out.Error = runErr.Error()
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			if err := enc.Encode(out); err != nil {
				return fmt.Errorf("sandbox run: %w", err)
			}
			if runErr != nil {
				return fmt.Errorf("sandbox run: %w", runErr)
			}
			return nil
		},
	}
	run.Flags().StringVar(&language, "lang", "", "language: python, java, cpp, csharp, typescript, javascript, php, shell")
	run.Flags().Float64Var(&timeout, "timeout", 0, "wall-time limit in seconds (default: the language's)")
	run.Flags().Int64Var(&memoryMB, "memory", 0, "memory limit in MiB (default: the language's)")
	run.Flags().StringVar(&stdin, "stdin", "", "standard input for the program")
	_ = run.MarkFlagRequired("lang")
	cmd.AddCommand(run)
	return cmd
}
