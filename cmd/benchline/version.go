package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/buildinfo"
)

// setVersion gives root a --version flag printing buildinfo's one line.
func setVersion(root *cobra.Command) {
	root.Version = buildinfo.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print this binary's version, commit, Go version and build date",
		Long: `version prints what --version prints; with --json one object:
{"version", "commit", "go_version", "build_date", "modified"}. The linker sets the
values (-ldflags -X, as the Makefile and the Dockerfile's VERSION build argument do);
what it leaves out comes from the Go build information, else "unknown".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Get()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), info.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
