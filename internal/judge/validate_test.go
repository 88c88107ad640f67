package judge

import (
	"fmt"
	"strings"
	"testing"
)

func TestUniqueKeys(t *testing.T) {
	type item struct {
		key   string
		score int
	}
	rule := UniqueKeys[item, string]{
		Key:   func(it item) (string, bool) { k := strings.TrimSpace(it.key); return k, k != "" },
		NoKey: func(i int, it item) error { return fmt.Errorf("item %d (score %d) has no key", i, it.score) },
		Twice: func(k string) error { return fmt.Errorf("%q twice", k) },
	}
	checked := rule
	checked.Item = func(k string, it item) error {
		if it.score < 0 {
			return fmt.Errorf("%s scored %d", k, it.score)
		}
		return nil
	}
	tests := []struct {
		name  string
		rule  UniqueKeys[item, string]
		items []item
		want  string // fmt.Sprint of the error
	}{
		{"no items", rule, nil, "<nil>"},
		{"distinct keys", rule, []item{{"a", 1}, {"b", 2}}, "<nil>"},
		{"an empty key", rule, []item{{"a", 1}, {"", 7}}, "item 2 (score 7) has no key"},
		{"a blank key", rule, []item{{" \t", 3}}, "item 1 (score 3) has no key"},
		{"a key twice", rule, []item{{"a", 1}, {"b", 2}, {"a", 3}}, `"a" twice`},
		{"a key twice as Key gives it", rule, []item{{"a", 1}, {" a ", 3}}, `"a" twice`},
		{"the first fault wins", rule, []item{{"a", 1}, {"a", 2}, {"", 3}}, `"a" twice`},
		{"without Item, the rest is not checked", rule, []item{{"a", -1}}, "<nil>"},
		{"Item on a good key", checked, []item{{"a", 1}, {"b", -2}}, "b scored -2"},
		{"Item before a later twice", checked, []item{{"a", -1}, {"a", 1}}, "a scored -1"},
		{"twice before Item", checked, []item{{"a", 1}, {"a", -1}}, `"a" twice`},
		{"no key before Item", checked, []item{{"", -1}}, "item 1 (score -1) has no key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(tc.rule.Check(tc.items)); got != tc.want {
				t.Errorf("Check = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestUniqueKeysIntKeys checks a rule over non-string keys, as omnicloze's
// blank numbers are.
func TestUniqueKeysIntKeys(t *testing.T) {
	rule := UniqueKeys[int, int]{
		Key:   func(n int) (int, bool) { return n, n >= 1 },
		NoKey: func(i, n int) error { return fmt.Errorf("answer %d names blank %d", i, n) },
		Twice: func(n int) error { return fmt.Errorf("blank %d twice", n) },
	}
	for _, tc := range []struct {
		items []int
		want  string
	}{
		{[]int{1, 2, 3}, "<nil>"},
		{[]int{1, 0}, "answer 2 names blank 0"},
		{[]int{2, 1, 2}, "blank 2 twice"},
	} {
		if got := fmt.Sprint(rule.Check(tc.items)); got != tc.want {
			t.Errorf("Check(%v) = %s, want %s", tc.items, got, tc.want)
		}
	}
}
