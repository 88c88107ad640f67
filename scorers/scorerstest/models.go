// Package scorerstest holds what tests of tasks share: the parts of a fake
// model gateway (scorers.Env.Models) that records the requests it gets.
package scorerstest

import (
	"slices"
	"sync"

	"github.com/benchline/benchline/internal/modelapi"
)

// Models records the requests a fake gateway gets. Embed it in a test's
// fake, call Record first in its Complete, and answer with Reply. It is
// safe for concurrent use.
type Models struct {
	mu  sync.Mutex
	got []modelapi.Request
}

// Record notes req.
func (m *Models) Record(req modelapi.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, req)
}

// Requests returns the requests recorded so far, in order: every one, or
// with models given, those to one of them.
func (m *Models) Requests(models ...string) []modelapi.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(models) == 0 {
		return slices.Clone(m.got)
	}
	var out []modelapi.Request
	for _, r := range m.got {
		if slices.Contains(models, r.Model) {
			out = append(out, r)
		}
	}
	return out
}

// Reply is a fake model's response: text, 10 prompt tokens in one
// attempt; or err, as the gateway returns it.
func Reply(text string, err error) (modelapi.Response, error) {
	if err != nil {
		return modelapi.Response{}, err
	}
	return modelapi.Response{Choices: []modelapi.Choice{{Content: text}}, Usage: modelapi.Usage{PromptTokens: 10, Attempts: 1}}, nil
}
