package datasets_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
)

func TestSplitParams(t *testing.T) {
	defaults := map[string]string{"writer": "", "seed": "0"}
	runtime := map[string]string{"unit_items": "8"}
	for _, tc := range []struct {
		name     string
		params   map[string]string
		norm, rt map[string]string
		bad      string
	}{
		{"defaults", nil, map[string]string{"writer": "", "seed": "0"}, map[string]string{"unit_items": "8"}, ""},
		{"given, trimmed", map[string]string{"writer": " a/b ", "unit_items": "3"},
			map[string]string{"writer": "a/b", "seed": "0"}, map[string]string{"unit_items": "3"}, ""},
		{"unknown", map[string]string{"writers": "a/b"}, nil, nil, `unknown parameter "writers" (have seed, unit_items, writer)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			norm, rt, err := datasets.SplitParams(tc.params, defaults, runtime)
			var ie *datasets.InputError
			if tc.bad != "" {
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.bad) {
					t.Errorf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(norm, tc.norm) || !reflect.DeepEqual(rt, tc.rt) {
				t.Errorf("got %v %v %v", norm, rt, err)
			}
		})
	}
	if defaults["writer"] != "" || runtime["unit_items"] != "8" {
		t.Error("the defaults were changed")
	}
}
