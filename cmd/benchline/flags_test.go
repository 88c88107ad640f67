package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadFlagValuesAreErrors checks that numeric flags out of range fail
// before the command does anything, naming the flag (finding 6: sandbox
// run --timeout -5 and --memory 0 silently used the defaults).
func TestBadFlagValuesAreErrors(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(prog, []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Commands that get past their flags would dial this closed port, and
	// a dev stack would keep its state here.
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	devDir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "run", "--lang", "python", "--timeout", "-5", prog}, "--timeout -5: want a positive number of seconds"},
		{[]string{"sandbox", "run", "--lang", "python", "--timeout", "0", prog}, "--timeout 0: want a positive number of seconds"},
		{[]string{"sandbox", "run", "--lang", "python", "--timeout", "NaN", prog}, "--timeout NaN: want a positive number of seconds"},
		{[]string{"sandbox", "run", "--lang", "python", "--memory", "0", prog}, "--memory 0: want a positive number of MiB"},
		{[]string{"sandbox", "run", "--lang", "python", "--memory", "-1", prog}, "--memory -1: want a positive number of MiB"},
		{[]string{"sandbox", "run", "--lang", "cobol", prog}, `--lang "cobol": want one of`},
		{[]string{"worker", "--max-activities", "0"}, "--max-activities 0: want at least 1"},
		{[]string{"worker", "--sample-concurrency", "-2"}, "--sample-concurrency -2: want at least 1"},
		{[]string{"worker", "--sandbox-activities", "0"}, "--sandbox-activities 0: want at least 1"},
		{[]string{"worker", "--checkpoint-interval", "-1s"}, "--checkpoint-interval -1s: want a duration of 0 or more"},
		{[]string{"worker", "--memory-limit-mb", "-1"}, "--memory-limit-mb -1: want 0 (none) or more"},
		{[]string{"worker", "--queues", "main,gpu"}, `--queues "gpu": want main or sandbox`},
		{[]string{"dev", "--temporal-port", "70000"}, "--temporal-port 70000: want a port from 1 to 65535, or 0 for a free one"},
		{[]string{"dev", "--s3-port", "-1"}, "--s3-port -1: want a port from 1 to 65535, or 0 for a free one"},
		{[]string{"dev", "--s3", "gofakes3"}, `--s3 "gofakes3": want minio or moto`},
		{[]string{"dev", "--s3-port", "9000", "--baseline-port", "9000"}, "--baseline-port and --s3-port are both 9000: want a port each"},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--shard-size", "0"}, "--shard-size 0: want at least 1"},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--parallel", "0"}, "--parallel 0: want at least 1"},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--limit", "-1"}, "--limit -1: want 0 (all) or more"},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--max-tokens", "-1"}, "--max-tokens -1: want 0 (the endpoint's) or more"},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--temperature", "-1"}, "--temperature -1: want 0 or more"},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--judge", "garbage judge!!"}, `--judge "garbage judge!!": want [ROLE=]PROVIDER/MODEL`},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--judge", "=baseline/"}, `--judge "=baseline/": want [ROLE=]PROVIDER/MODEL`},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--judge", "nosuch/x"}, `--judge "nosuch/x": unknown provider "nosuch"`},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/reference", "--judge", "a=baseline/first,,baseline/second"}, `--judge "a=baseline/first,,baseline/second": want [ROLE=]PROVIDER/MODEL`},
		{[]string{"eval", "--dataset", "bfcl", "--model", "baseline/nosuch"}, `--model "baseline/nosuch": baseline: unknown model "nosuch" (want reference, noisy-<p>,`},
		{[]string{"eval", "--dataset", "bfcl", "--model", "gpt-4o"}, `--model "gpt-4o": want PROVIDER/MODEL`},
		{[]string{"eval", "--dataset", "bfcl", "--model", "nosuch/x"}, `--model "nosuch/x": unknown provider "nosuch" (known: baseline, openai`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			args := tc.args
			if args[0] == "dev" {
				args = append(args, "--dir", devDir)
			}
			root.SetArgs(args)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q (output %q)", err, tc.want, out.String())
			}
			if out.Len() > 0 {
				t.Errorf("the command ran and printed %q", out.String())
			}
		})
	}
}
