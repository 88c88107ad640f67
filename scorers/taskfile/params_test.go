package taskfile

import (
	"strings"
	"testing"

	"github.com/benchline/benchline/internal/modelapi"
)

// TestTopP: generation.top_p is the request's top_p unless the run sets
// its own; outside (0, 1] it is refused naming the key.
func TestTopP(t *testing.T) {
	c, err := Load("t.yaml", []byte(base+"generation: {top_p: 0.95, max_tokens: 64}\nscorers: [{type: exact_match}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	task := NewTask(c)
	if p := task.params(modelapi.Params{}); p.TopP != float32(0.95) || p.MaxTokens != 64 {
		t.Errorf("the task file's top_p 0.95: the request has top_p %v, max_tokens %d", p.TopP, p.MaxTokens)
	}
	if p := task.params(modelapi.Params{TopP: 0.5}); p.TopP != 0.5 {
		t.Errorf("the run's top_p 0.5 over the task file's: the request has %v", p.TopP)
	}
	for _, bad := range []string{"0", "1.5", "-0.1"} {
		_, err := Load("t.yaml", []byte(base+"generation: {top_p: "+bad+"}\nscorers: [{type: exact_match}]\n"))
		if err == nil || !strings.Contains(err.Error(), "generation.top_p") {
			t.Errorf("top_p %s: %v, want an error naming generation.top_p", bad, err)
		}
	}
}
