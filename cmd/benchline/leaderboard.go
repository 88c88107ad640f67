package main

import "github.com/spf13/cobra"

// newLeaderboardCmd is the parent of the leaderboard commands.
func newLeaderboardCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "leaderboard", Short: "Refresh, schedule and serve leaderboards"}
	cmd.AddCommand(newLeaderboardServeCmd(g))
	return cmd
}
