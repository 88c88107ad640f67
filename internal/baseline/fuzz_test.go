package baseline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzLoadReferences reads arbitrary references files: an error names the
// line it stopped at ("line N:" or "FILE:N:"), and an accepted file holds at most one reference per
// non-blank line.
func FuzzLoadReferences(f *testing.F) {
	for _, s := range []string{
		`{"messages": [{"role": "user", "content": "hi"}], "reference": {"content": "hello"}}`,
		`{"prompt": "p", "reference": {"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}}` + "\n\n" + `{"key": "k", "reward": true, "reference": {}}`,
		`{"prompt": "p", "key": "k", "reference": {}}`, `{"reference": {}}`, `[]`, `{"prompt": "p", "reference": {"tool_calls": [{"arguments": "x"}]}}`,
		"{\"prompt\": \"\xff\", \"reference\": {\"content\": \"\xfe\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, err := LoadJSONL(bytes.NewReader(data))
		lines := 0
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if err != nil {
			named := false
			for n := 1; n <= strings.Count(string(data), "\n")+1 && !named; n++ {
				named = strings.Contains(err.Error(), fmt.Sprintf("line %d:", n)) || strings.Contains(err.Error(), fmt.Sprintf(":%d:", n))
			}
			if !named && !strings.Contains(err.Error(), "read references") {
				t.Fatalf("error names no line: %v", err)
			}
			return
		}
		if refs.Len() > lines {
			t.Fatalf("%d references from %d lines", refs.Len(), lines)
		}
	})
}
