package taskfile

import (
	"strings"
	"testing"
)

// TestTaskBlock: the card's fence is longer than any run of backticks in
// the task file (which cannot close it early), and a long file is cut at a
// line break and says so.
func TestTaskBlock(t *testing.T) {
	cases := []struct {
		name, raw string
		limit     int
		want      []string
		not       []string
	}{
		{"plain", "name: a\n", 100, []string{"```yaml\nname: a\n```\n"}, []string{"cut at"}},
		{"backticks", "prompt: \"````x```\"\n", 100, []string{"`````yaml\n", "\n`````\n"}, nil},
		{"cut", "a: 1\nb: 2\nc: 3\n", 12, []string{"```yaml\na: 1\nb: 2\n```\n", "(cut at 10 of 15 bytes)"}, []string{"c: 3"}},
		{"markup stays text", "d: \"<script>x</script>\"\n", 100, []string{"<script>"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := TaskBlock([]byte(tc.raw), tc.limit)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("TaskBlock = %q, lacks %q", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("TaskBlock = %q, has %q", got, w)
				}
			}
		})
	}
}
