package main

// TEMPORARY: the `leaderboard serve` command comes from branch `site`; the
// lead replaces this file at merge.

import (
	"errors"

	"github.com/spf13/cobra"
)

func newLeaderboardServeCmd(g *globals) *cobra.Command {
	_ = g
	var addr string
	cmd := &cobra.Command{
		Use:   "serve --addr HOST:PORT",
		Short: "Serve every board's latest stamp (not built yet on this branch)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("leaderboard serve: not built yet")
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	return cmd
}
