package toolpref_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchline/benchline/datasets"
	"github.com/benchline/benchline/datasets/toolpref"
)

func TestParseSamplers(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical form; "" with wantErr == "" means no samplers
		err  string // part of the error
	}{
		{"", "", ""},
		{"   ", "", ""},
		{"baseline/reference@0", "baseline/reference@0x1", ""},
		{"baseline/noisy-0.3@0.7x2,baseline/reference@0x1", "baseline/noisy-0.3@0.7x2,baseline/reference@0x1", ""},
		// Sorted by model then temperature; spaces ignored; numbers canonical.
		{" baseline/reference@0x1 , baseline/noisy-0.3@0.70x2", "baseline/noisy-0.3@0.7x2,baseline/reference@0x1", ""},
		{"openai/gpt-4o@1x3,openai/gpt-4o@0.2x1", "openai/gpt-4o@0.2x1,openai/gpt-4o@1x3", ""},
		// The model part may hold slashes, dots, colons and "@" (the last "@" ends it).
		{"vllm/Qwen/Qwen3-8B@0.6x4", "vllm/Qwen/Qwen3-8B@0.6x4", ""},
		{"ollama/llama3.1:8b@2", "ollama/llama3.1:8b@2x1", ""},
		{"gw/team@org/model@0.5x2", "gw/team@org/model@0.5x2", ""},
		{"baseline/reference@1e-1", "baseline/reference@0.1x1", ""},
		{"baseline/reference@0x64", "baseline/reference@0x64", ""},

		{"baseline/reference", "", "no @TEMPERATURE"},
		{"reference@0", "", `model "reference" is not <provider>/<model>`},
		{"/reference@0", "", "is not <provider>/<model>"},
		{"baseline/@0", "", "is not <provider>/<model>"},
		{"baseline/ref erence@0", "", "is not <provider>/<model>"},
		{"baseline/reference@", "", "temperature"},
		{"baseline/reference@hot", "", "temperature"},
		{"baseline/reference@-0.1", "", "temperature"},
		{"baseline/reference@2.5", "", "want a number in [0, 2]"},
		{"baseline/reference@NaN", "", "temperature"},
		{"baseline/reference@0x0", "", "count"},
		{"baseline/reference@0x65", "", "want an integer in [1, 64]"},
		{"baseline/reference@0x", "", "count"},
		{"baseline/reference@0x2.5", "", "count"},
		{"baseline/reference@0X2", "", "temperature"}, // the count marker is a lowercase x
		{"baseline/reference@0,,baseline/noisy-0.1@1", "", "empty entry"},
		{"baseline/reference@0,", "", "empty entry"},
		{"baseline/reference@0x1,baseline/reference@0.0x2", "", "listed twice"},
		{"synthetic/perturb-v1@0", "", "reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := toolpref.ParseSamplers(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				if !strings.Contains(err.Error(), "MODEL@TEMPERATURE[xCOUNT]") && !strings.Contains(err.Error(), "reserved") && !strings.Contains(err.Error(), "listed twice") {
					t.Errorf("error %q does not show the syntax", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := toolpref.FormatSamplers(got); s != tc.want {
				t.Errorf("canonical %q, want %q", s, tc.want)
			}
			if again, err := toolpref.ParseSamplers(toolpref.FormatSamplers(got)); err != nil || toolpref.FormatSamplers(again) != tc.want {
				t.Errorf("canonical form does not parse back: %v %v", again, err)
			}
		})
	}
}

func TestParseParamsSampling(t *testing.T) {
	o, norm, err := toolpref.ParseParams(map[string]string{"candidates": "baseline/reference@0, baseline/noisy-0.3@0.7x2", "sample_unit": "25"})
	if err != nil {
		t.Fatal(err)
	}
	if norm["candidates"] != "baseline/noisy-0.3@0.7x2,baseline/reference@0x1" || norm["sample_seed"] != "0" {
		t.Errorf("normalized params %v", norm)
	}
	if _, ok := norm["sample_unit"]; ok || o.UnitItems != 25 {
		t.Errorf("sample_unit: %v in the version params, %d items per unit; want a runtime setting of 25", norm, o.UnitItems)
	}
	if len(o.Samplers) != 2 || o.Samplers[0] != (toolpref.Sampler{Model: "baseline/noisy-0.3", Temperature: 0.7, Count: 2}) {
		t.Errorf("samplers %+v", o.Samplers)
	}
	// The order of the entries does not change the version parameters.
	_, norm2, _ := toolpref.ParseParams(map[string]string{"candidates": "baseline/noisy-0.3@0.7x2,baseline/reference@0x1"})
	if norm2["candidates"] != norm["candidates"] {
		t.Errorf("%q vs %q", norm2["candidates"], norm["candidates"])
	}
	if _, norm3, _ := toolpref.ParseParams(nil); norm3["candidates"] != "" || norm3["sample_seed"] != "0" {
		t.Errorf("defaults %v", norm3)
	}

	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"candidates": "baseline/reference"}, `candidates="baseline/reference": "baseline/reference": no @TEMPERATURE`},
		{map[string]string{"candidates": "baseline/reference@0x1,baseline/reference@0x2"}, "listed twice"},
		{map[string]string{"sample_seed": "-1"}, `sample_seed="-1": want a non-negative integer`},
		{map[string]string{"sample_unit": "0"}, `sample_unit="0": want a positive integer`},
		{map[string]string{"sample_units": "5"}, `unknown parameter "sample_units"`},
	} {
		_, _, err := toolpref.ParseParams(tc.params)
		var ie *datasets.InputError
		if !errors.As(err, &ie) || ie.File != "params" || !strings.Contains(ie.Msg, tc.want) {
			t.Errorf("%v: err = %v, want an input error in params containing %q", tc.params, err, tc.want)
		}
	}
}
