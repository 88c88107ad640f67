package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/names"
)

func newLeaderboardPresignCmd(g *globals) *cobra.Command {
	var expires time.Duration
	cmd := &cobra.Command{
		Use:   "presign BOARD [PATH...]",
		Short: "Print links that read files of a board's latest stamp without credentials, until they expire",
		Long: `Print one presigned GET link per PATH of the board's latest stamp
(leaderboards/<board>/<stamp>/site/PATH; default scores.json, the stamp's
scores), valid for --expires (at most 168h). The stamp's objects are private;
a link reads one object, so a site's pages that link other files are served
with benchline leaderboard serve instead. Anyone holding a link reads that
object until it expires: send it as you would a password.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			board, paths := args[0], args[1:]
			if err := names.Name("board", board); err != nil {
				return fmt.Errorf("leaderboard presign: %w", err)
			}
			_, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			b, err := blob.GetBytes(cmd.Context(), store, leaderboard.LatestKey(board))
			if err != nil {
				return fmt.Errorf("leaderboard presign: board %q: %w", board, err)
			}
			stamp := strings.TrimSpace(string(b))
			keys := []string{leaderboard.ScoresKey(board, stamp)}
			if len(paths) > 0 {
				keys = keys[:0]
				for _, p := range paths {
					if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") || strings.Contains(p, "\\") {
						return fmt.Errorf("leaderboard presign: %q: want a path inside the stamp's site", p)
					}
					keys = append(keys, leaderboard.SiteKey(board, stamp)+"/"+p)
				}
			}
			for _, k := range keys {
				if _, err := store.Head(cmd.Context(), k); err != nil {
					return fmt.Errorf("leaderboard presign: %w", err)
				}
				u, err := store.Presign(cmd.Context(), k, expires)
				if err != nil {
					return fmt.Errorf("leaderboard presign: %w", err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), u)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&expires, "expires", time.Hour, fmt.Sprintf("how long each link reads its object (at most %s)", s3blob.MaxPresignExpiry))
	return cmd
}
