package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchline/benchline/internal/access"
	"github.com/benchline/benchline/internal/leaderboard"
	"github.com/benchline/benchline/internal/logattr"
	"github.com/benchline/benchline/internal/login"
	"github.com/benchline/benchline/internal/secret"
	"github.com/benchline/benchline/internal/site"
)

func newLeaderboardServeCmd(g *globals) *cobra.Command {
	var (
		addr, tokensFile string
		boardFiles       []string
		allowAnonymous   bool
		oc               oidcFlags
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
--allow-anonymous. With --oidc-issuer people log in with OpenID Connect at
/login?return=/BOARD/ (back at /callback; out with the button of the /logout
page, a POST with the session's token); a logged-out browser
asking for a board page is sent there. Every request that reads a board writes one JSON audit line
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
			var h http.Handler = site.Guarded(store, gate)
			if oc.issuer != "" {
				lg, err := oc.login(cmd.Context(), gate.Audit)
				if err != nil {
					return err
				}
				gate.Sessions = lg
				mux := http.NewServeMux()
				mux.Handle("/login", lg)
				mux.Handle("/callback", lg)
				mux.Handle("/logout", lg)
				mux.Handle("/", h)
				h = mux
			}
			srv := site.NewServer(h)
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
	cmd.Flags().StringVar(&oc.issuer, "oidc-issuer", "", "OpenID Connect issuer URL: people log in at /login (needs --oidc-client-id, --oidc-redirect-url and a cookie key)")
	cmd.Flags().StringVar(&oc.clientID, "oidc-client-id", "", "OIDC client id")
	cmd.Flags().StringVar(&oc.redirect, "oidc-redirect-url", "", "OIDC redirect URL: this server's https://HOST/callback")
	cmd.Flags().StringVar(&oc.groups, "oidc-groups-claim", "groups", "ID token claim that lists the person's groups")
	cmd.Flags().StringVar(&oc.secretFile, "oidc-client-secret-file", "", "file holding the OIDC client secret (or env "+envOIDCSecret+")")
	cmd.Flags().StringVar(&oc.keyFile, "session-key-file", "", "file holding the session cookie key, at least 32 bytes (or env "+envSessionKey+")")
	cmd.Flags().DurationVar(&oc.ttl, "session-ttl", login.DefaultSessionTTL, "how long a login session lasts")
	return cmd
}

const (
	envOIDCSecret = "BENCHLINE_OIDC_CLIENT_SECRET"
	envSessionKey = "BENCHLINE_SESSION_KEY"
)

type oidcFlags struct {
	issuer, clientID, redirect, groups, secretFile, keyFile string
	ttl                                                     time.Duration
}

// readSecret reads a secret from file (at most 4 KiB, trimmed) or env.
func readSecret(flag, file, env string) (secret.Value, error) {
	if file == "" {
		return secret.New(os.Getenv(env)), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return secret.Value{}, fmt.Errorf("leaderboard serve: %s: %w", flag, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil || len(b) > 4096 {
		return secret.Value{}, fmt.Errorf("leaderboard serve: %s %s: unreadable or larger than 4 KiB", flag, file)
	}
	return secret.New(strings.TrimSpace(string(b))), nil
}

func (o oidcFlags) login(ctx context.Context, audit *slog.Logger) (*login.Login, error) {
	cs, err := readSecret("--oidc-client-secret-file", o.secretFile, envOIDCSecret)
	if err != nil {
		return nil, err
	}
	key, err := readSecret("--session-key-file", o.keyFile, envSessionKey)
	if err != nil {
		return nil, err
	}
	lg, err := login.New(ctx, login.Config{Issuer: o.issuer, ClientID: o.clientID, ClientSecret: cs,
		RedirectURL: o.redirect, GroupsClaim: o.groups, CookieKey: key, SessionTTL: o.ttl, Audit: audit})
	if err != nil {
		return nil, fmt.Errorf("leaderboard serve: %w", err)
	}
	return lg, nil
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
