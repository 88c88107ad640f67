package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/logattr"
	"github.com/benchline/benchline/internal/site"
)

func newLeaderboardServeCmd(g *globals) *cobra.Command {
	var (
		addr, tokensFile string
		boardFiles       []string
		allowAnonymous   bool
	)
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
disk (file://) after copying leaderboards/<board>/<stamp>/site/ out of the store.

Every board is private unless a board file given with --board says who may
read it (its access: key: groups, email_domains, tokens, anonymous). A board
the caller may not read answers exactly as one that does not exist (404), and
GET / lists only the boards the caller may read. Machines send
"Authorization: Bearer TOKEN" with a token of the --tokens file (make one with
benchline leaderboard token NAME); anonymous: true counts only with
--allow-anonymous. Every request that reads a board writes one JSON audit line
(who, board, route, allowed) to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, store, err := g.store(cmd.Context())
			if err != nil {
				return err
			}
			slog.SetDefault(g.logger())
			gate, err := serveGate(tokensFile, boardFiles, allowAnonymous)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("leaderboard serve: %w", err)
			}
			srv := site.NewServer(site.Guarded(store, gate))
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
	cmd.Flags().StringVar(&tokensFile, "tokens", "", "tokens file: one \"NAME sha256:HEX\" line per bearer token (benchline leaderboard token)")
	cmd.Flags().StringArrayVar(&boardFiles, "board", nil, "board file whose access: key says who may read the board (repeatable; a board without one is private)")
	cmd.Flags().BoolVar(&allowAnonymous, "allow-anonymous", false, "let boards whose access says anonymous: true be read without a login or token")
	return cmd
}

// serveGate builds serve's access gate from its flags; the audit lines
// are JSON on stderr whatever --log-format says.
func serveGate(tokensFile string, boardFiles []string, allowAnonymous bool) (*site.Gate, error) {
	gate := &site.Gate{
		Policies:       map[string]access.Policy{},
		AllowAnonymous: allowAnonymous,
		Audit:          slog.New(logattr.Handler(slog.NewJSONHandler(os.Stderr, nil))),
	}
	if tokensFile != "" {
		t, err := access.ReadTokens(tokensFile)
		if err != nil {
			return nil, fmt.Errorf("leaderboard serve: --tokens: %w", err)
		}
		gate.Tokens = t
	}
	for _, f := range boardFiles {
		name, p, err := leaderboard.ReadAccess(f)
		if err != nil {
			return nil, fmt.Errorf("leaderboard serve: --board: %w", err)
		}
		if _, dup := gate.Policies[name]; dup {
			return nil, fmt.Errorf("leaderboard serve: --board %s: board %q given twice", f, name)
		}
		gate.Policies[name] = p
	}
	return gate, nil
}

func newLeaderboardTokenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "token NAME",
		Short: "Make a bearer token for leaderboard serve and print it once with its tokens-file line",
		Long: `Make a bearer token (32 random bytes) named NAME. The token is printed once, on
the first line; the second line is what to append to serve's --tokens file (the
name and the token's SHA-256: the token itself is never stored). Boards name the
token in access.tokens.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tok, line, err := access.NewToken(args[0])
			if err != nil {
				return fmt.Errorf("leaderboard token: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "token: %s\ntokens file line: %s\n", tok.Reveal(), line)
			return nil
		},
	}
}
