// Package integration tests benchline end to end against the real embedded
// stack: a Temporal dev server, MinIO (and moto for the blob conformance
// suite), and the production wiring from internal/app. `make setup` installs
// the servers; without them these tests fail with a message saying so.
package integration

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/devstack"
)

var update = flag.Bool("update", false, "rewrite golden files (workflow histories for replay tests)")

// stack is the shared embedded stack with an in-process worker;
// stackStarted is when its worker was running.
var (
	stack        *devstack.Running
	stackStarted time.Time
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("integration: skipped under -short (they need the embedded stack)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "benchline-it-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	stack, err = devstack.StartStack(context.Background(), devstack.StackOptions{Options: devstack.Options{Dir: dir, Headless: true}}, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration: cannot start the embedded stack: %v\n(run `make setup` first; `make test` does)\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	stackStarted = time.Now()
	code := m.Run()
	stack.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}
