package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCheck: a host (or container) that can sandbox passes Check; a
// bubblewrap that cannot build its namespaces fails it, matching
// ErrInfrastructure and pointing at the options docs/DEPLOY.md lists.
func TestCheck(t *testing.T) {
	if err := newTestSandbox(t, Config{}).Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	// /bin/false stands in for a bwrap that exits at once, as one refused
	// its namespaces does.
	s := newTestSandbox(t, Config{Bwrap: "/bin/false"})
	err := s.Check(context.Background())
	if err == nil || !errors.Is(err, ErrInfrastructure) || !strings.Contains(err.Error(), "docs/DEPLOY.md") {
		t.Fatalf("Check with a failing bwrap: %v, want an infrastructure error naming docs/DEPLOY.md", err)
	}
}
