package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/site"
)

func newLeaderboardServeCmd(g *globals) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve every board's latest stamp over HTTP",
		Long: `Serve the static site of every board's latest stamp from the object store.

  GET /                     links each board
  GET /<board>/             the board's overview page
  GET /<board>/scores.json  {"board", "stamp", "cells": [{"dataset", "version", "model", "metric",
                            "mean", "ci_low", "ci_high", "n", "run_id"}]}
  GET /<board>/...          the stamp's other pages, plots, data and downloads

Every route is GET or HEAD without a body; requests are bounded (headers
10 s, a whole request 15 s, an answer 2 min, headers 64 KiB) and at most 4
explorer requests are answered at once (others wait up to 5 s, then 503
with Retry-After): see the Limits table in README.md.

A board is served once leaderboards/<board>/latest exists; the latest stamp is read
on every request, so a refresh shows without a restart. The same files open from
disk (file://) after copying leaderboards/<board>/<stamp>/site/ out of the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			slog.SetDefault(g.logger())
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("leaderboard serve: %w", err)
			}
			srv := site.NewServer(store)
			fmt.Fprintf(cmd.OutOrStdout(), "serving leaderboards on http://%s/\n", ln.Addr())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case err := <-done:
				return fmt.Errorf("leaderboard serve: %w", err)
			case <-cmd.Context().Done():
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
					return fmt.Errorf("leaderboard serve: shutdown: %w", err)
				}
				return nil
			}
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8300", "HOST:PORT to listen on (port 0 picks a free one)")
	return cmd
}
