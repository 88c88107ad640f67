package scorerstest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
)

func TestModels(t *testing.T) {
	var m Models
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Record(modelapi.Request{Model: fmt.Sprintf("a/m%d", i%2)})
		}()
	}
	wg.Wait()
	if n, n0, n1, none := len(m.Requests()), len(m.Requests("a/m0")), len(m.Requests("a/m1", "a/x")), len(m.Requests("a/x")); n != 20 || n0 != 10 || n1 != 10 || none != 0 {
		t.Errorf("requests: %d in all, %d to a/m0, %d to a/m1 or a/x, %d to a/x", n, n0, n1, none)
	}
	m.Record(modelapi.Request{Model: "a/last"})
	if got := m.Requests(); got[len(got)-1].Model != "a/last" {
		t.Errorf("not in order: last %s", got[len(got)-1].Model)
	}
}

func TestReply(t *testing.T) {
	r, err := Reply("hello", nil)
	if err != nil || r.Choices[0].Content != "hello" || r.Usage.PromptTokens != 10 || r.Usage.Attempts != 1 {
		t.Errorf("Reply = %+v, %v", r, err)
	}
	down := errors.New("down")
	if r, err := Reply("ignored", down); err != down || len(r.Choices) != 0 {
		t.Errorf("Reply with an error = %+v, %v", r, err)
	}
}
