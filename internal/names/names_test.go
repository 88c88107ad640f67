package names

import (
	"errors"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		ref, name, version string
		ok                 bool
	}{
		{"bfcl", "bfcl", "", true},
		{"bfcl@latest", "bfcl", "latest", true},
		{"bfcl@v1a2b3c", "bfcl", "v1a2b3c", true},
		{"reporteval@variant", "reporteval", "variant", true}, // a tag (--as) keeps its v
		{"reporteval@refs.v2", "reporteval", "refs.v2", true},
		{"bfcl@..", "", "", false},
		{"bfcl@.x", "", "", false},
		{"bfcl@1a2b3c", "bfcl", "1a2b3c", true},
		{"reporteval-sections@latest", "reporteval-sections", "latest", true},
		{"bfcl@../../../runs/X", "", "", false},
		{"../bfcl@latest", "", "", false},
		{"bfcl/../x", "", "", false},
		{"bfcl@", "", "", false},
		{"@latest", "", "", false},
		{"", "", "", false},
		{"bfcl@v1@v2", "", "", false},
		{"bfcl@a/b", "", "", false},
		{"bf cl", "", "", false},
		{"bfcl\n", "", "", false},
		{".bfcl", "", "", false},
	}
	for _, tt := range tests {
		name, version, err := ParseRef(tt.ref)
		if (err == nil) != tt.ok || name != tt.name || version != tt.version {
			t.Errorf("ParseRef(%q) = %q, %q, %v", tt.ref, name, version, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseRef(%q): %v does not wrap ErrInvalid", tt.ref, err)
		}
	}
}

func TestRunIDAndName(t *testing.T) {
	for id, ok := range map[string]bool{"r0123456789abcde": true, "../datasets/bfcl/v1": false, "r1/x": false, "": false, "r1..": false} {
		if err := RunID(id); (err == nil) != ok {
			t.Errorf("RunID(%q) = %v", id, err)
		}
	}
	for n, ok := range map[string]bool{"nightly": true, "night_ly-2": true, "../x": false, "a.b": false, "": false} {
		if err := Name("board", n); (err == nil) != ok {
			t.Errorf("Name(%q) = %v", n, err)
		}
	}
}
