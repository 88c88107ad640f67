package perf

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Kind says how a figure is measured.
type Kind int

const (
	// GoBench runs `go test -run '^$' -bench ...` in the source checkout and
	// reads a metric from a benchmark line.
	GoBench Kind = iota
	// Self runs this benchline executable (a bench subcommand) and reads a
	// field of the JSON object it prints.
	Self
	// Script runs a script of the checkout and reads the first submatch of Pattern.
	Script
)

// Need is something a figure needs that may be missing on this machine.
type Need struct {
	What    string      // "the sandbox (bwrap, python3, node, php)"
	Present func() bool // nil: never present unless selected with --only
}

// Figure is one figure of docs/PERFORMANCE.md and how to reproduce it.
type Figure struct {
	Name    string // stable, [a-z0-9-]
	Section string // the docs/PERFORMANCE.md heading (without #) it belongs to
	Kind    Kind

	// GoBench.
	Pkg            string   // "./internal/pq/"
	Bench          string   // the -bench regexp
	Benchtime      string   // -benchtime of a full run ("" = go test's 1s)
	QuickBenchtime string   // -benchtime with --quick
	Flags          []string // more go test flags: -cpu 1, -benchmem, -count 3
	Line           string   // the benchmark line read, without -GOMAXPROCS
	RefLine        string   // when set, the figure is Line's metric ÷ RefLine's
	Metric         string   // the unit read: ns/op, rows/s, checks/cpu-s ...

	// Self and Script.
	Args      []string       // Self: benchline arguments; Script: the script (relative to the module root) and its arguments; $VARS expand
	QuickArgs []string       // with --quick (nil: Args)
	Field     string         // Self: the JSON field read
	Pattern   *regexp.Regexp // Script: its first submatch is the figure

	Scale     float64 // the value read is multiplied by Scale (0: 1), e.g. 1e-6 for ns → ms
	Unit      string  // the unit shown
	Reference float64 // when set, the figure is the value ÷ Reference
	RefNote   string  // what the reference figure is
	Goal      Goal
	Needs     []Need
}

// Command is the figure's command line as a user would type it from the module root.
func (f Figure) Command(quick bool) []string {
	switch f.Kind {
	case GoBench:
		bt := f.Benchtime
		if quick && f.QuickBenchtime != "" {
			bt = f.QuickBenchtime
		}
		argv := []string{"go", "test", "-run", "^$", "-bench", f.Bench}
		if bt != "" {
			argv = append(argv, "-benchtime", bt)
		}
		argv = append(argv, f.Flags...)
		return append(argv, f.Pkg)
	case Self:
		args := f.Args
		if quick && f.QuickArgs != nil {
			args = f.QuickArgs
		}
		return append([]string{"benchline"}, args...)
	default:
		if quick && f.QuickArgs != nil {
			return append([]string(nil), f.QuickArgs...)
		}
		return append([]string(nil), f.Args...)
	}
}

// ShellQuote joins argv into one line a POSIX shell reads back as argv.
func ShellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\|&;()<>*?[]#~^{}!`") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

func lookPath(names ...string) func() bool {
	return func() bool {
		for _, n := range names {
			if _, err := exec.LookPath(n); err != nil {
				return false
			}
		}
		return true
	}
}

func envSet(names ...string) func() bool {
	return func() bool {
		for _, n := range names {
			if os.Getenv(n) == "" {
				return false
			}
		}
		return true
	}
}

var (
	needSandbox  = Need{What: "the sandbox (bwrap, python3, node, php)", Present: lookPath("bwrap", "python3", "node", "php")}
	needBwrap    = Need{What: "the sandbox (bwrap)", Present: lookPath("bwrap")}
	needDevStack = Need{What: "the dev stack (benchline dev --env-file FILE, then set -a; . FILE; set +a)",
		Present: envSet("TEMPORAL_ADDRESS", "BENCHLINE_S3_ENDPOINT", "BENCHLINE_BASELINE_URL")}
	needS3 = Need{What: "an S3 server (benchline dev --env-file FILE, then set -a; . FILE; set +a)",
		Present: envSet("BENCHLINE_S3_ENDPOINT")}
	needBFCL = Need{What: "a BFCL checkout in $BENCHLINE_BFCL_CHECKOUT (scorers/bfcl/testdata/README.md)", Present: func() bool {
		d := os.Getenv("BENCHLINE_BFCL_CHECKOUT")
		st, err := os.Stat(d)
		return d != "" && err == nil && st.IsDir()
	}}
	needMinutes = Need{What: "minutes on the real stack (select it with --only)"}
	needNPM     = Need{What: "npm, node and curl (the script installs promptfoo 0.123.1, and Node.js 22 if needed, into $BENCHLINE_CACHE) and bin/benchline (make build)",
		Present: lookPath("npm", "node", "curl")}
)

var bfclMedianRatio = regexp.MustCompile(`median ratio over \d+ pairs: ([0-9.]+)x`)

// promptfooRatio reads deploy/dev/promptfoo-ratio.sh's ratio line (the first
// size's, when it is given several).
var promptfooRatio = regexp.MustCompile(`promptfoo/benchline cpu per sample ratio: ([0-9.]+)x`)

// Figures is the registry, in the order of docs/PERFORMANCE.md.
var Figures = []Figure{
	// Dataset builds.
	{Name: "build-synthetic", Section: "Dataset builds: Parquet written to the local S3 server", Kind: Self,
		Args:      []string{"bench", "build", "synthetic", "--param", "rows=1000000", "--param", "seed=77"},
		QuickArgs: []string{"bench", "build", "synthetic", "--param", "rows=100000", "--param", "seed=77"},
		Field:     "rows_per_sec", Unit: "rows/s", Needs: []Need{needS3}},
	{Name: "pq-write", Section: "Dataset builds: Parquet written to the local S3 server", Pkg: "./internal/pq/",
		Bench: "^BenchmarkWrite$", QuickBenchtime: "5x", Flags: []string{"-benchmem"},
		Line: "BenchmarkWrite", Metric: "rows/s", Unit: "rows/s"},
	{Name: "pq-read-range-64k", Section: "Dataset builds: Parquet written to the local S3 server", Pkg: "./internal/pq/",
		Bench: "^BenchmarkReadRange$", QuickBenchtime: "200ms",
		Line: "BenchmarkReadRange/page=64KiB", Metric: "rows/s", Unit: "rows/s"},
	{Name: "synthetic-write-part", Section: "Dataset builds: Parquet written to the local S3 server", Pkg: "./datasets/synthetic/",
		Bench: "^BenchmarkWritePart$", QuickBenchtime: "2x",
		Line: "BenchmarkWritePart", Metric: "rows/s", Unit: "rows/s"},

	// Dataset publishing.
	{Name: "publish-copy", Section: "Dataset publishing: copying a part to a release", Pkg: "./activities/",
		Bench: "^Benchmark(CopyReleaseFile|SHA256Part)$", Benchtime: "10x", QuickBenchtime: "3x", Flags: []string{"-count", "3"},
		Line: "BenchmarkCopyReleaseFile", Metric: "MB/s", Unit: "MB/s"},
	{Name: "publish-sha256", Section: "Dataset publishing: copying a part to a release", Pkg: "./activities/",
		Bench: "^Benchmark(CopyReleaseFile|SHA256Part)$", Benchtime: "10x", QuickBenchtime: "3x", Flags: []string{"-count", "3"},
		Line: "BenchmarkSHA256Part", Metric: "MB/s", Unit: "MB/s"},

	// Evaluation runs.
	{Name: "eval-ratio", Section: "Evaluation runs: the full pipeline against the gateway alone", Kind: Self,
		Args: []string{"bench", "eval", "--rows", "10000"}, QuickArgs: []string{"bench", "eval", "--rows", "2000"},
		Field: "ratio", Unit: "× gateway loop", Goal: Goal{AtLeast: true, Value: 0.5}, Needs: []Need{needDevStack}},
	{Name: "eval-run-rate", Section: "Evaluation runs: the full pipeline against the gateway alone", Kind: Self,
		Args: []string{"bench", "eval", "--rows", "10000"}, QuickArgs: []string{"bench", "eval", "--rows", "2000"},
		Field: "run_samples_per_sec", Unit: "samples/s", Needs: []Need{needDevStack}},

	{Name: "taskfile-ratio", Section: "Task files against the compiled synthetic benchmark", Kind: Self,
		Args: []string{"bench", "taskfile", "--rows", "100000"}, QuickArgs: []string{"bench", "taskfile", "--rows", "10000", "--rounds", "1"},
		Field: "ratio", Unit: "× synthetic", Goal: Goal{AtLeast: true, Value: 0.9}, Needs: []Need{needDevStack, needMinutes}},

	// promptfoo: CPU per sample on the same prompts and endpoint.
	{Name: "promptfoo-cpu-ratio", Section: "promptfoo on the same endpoint", Kind: Script,
		Args:      []string{"deploy/dev/promptfoo-ratio.sh", "10000"},
		QuickArgs: []string{"deploy/dev/promptfoo-ratio.sh", "2000"},
		Pattern:   promptfooRatio, Unit: "× less CPU/sample than promptfoo",
		RefNote: "promptfoo 0.123.1's CPU per sample on the same prompts and endpoint, same run",
		Goal:    Goal{AtLeast: true, Value: 100}, Needs: []Need{needNPM, needMinutes}},

	// Batch mode is for large runs, where a run's fixed CPU (about 0.3 s:
	// its workflow, plan and summary) is not what is measured: 50,000
	// samples (PERFORMANCE.md "Round 4" and "Round 6" give 10,000 too).
	{Name: "promptfoo-cpu-ratio-batch", Section: "Batch mode against promptfoo", Kind: Script,
		Args:      []string{"deploy/dev/promptfoo-ratio.sh", "--batch", "50000"},
		QuickArgs: []string{"deploy/dev/promptfoo-ratio.sh", "--batch", "2000"},
		Pattern:   promptfooRatio, Unit: "× less CPU/sample than promptfoo",
		RefNote: "promptfoo 0.123.1's CPU per sample on the same prompts and endpoint, same run; benchline in batch mode",
		Goal:    Goal{AtLeast: true, Value: 100}, Needs: []Need{needNPM, needMinutes}},

	// Sandbox: the programs IFEvalCode scoring runs, sandboxed ÷ plain.
	sandboxRatio("python"), sandboxRatio("javascript"), sandboxRatio("php"), sandboxRatio("shell"), sandboxRatio("instruction"),
	helloRatio("python"), helloRatio("javascript"), helloRatio("php"), helloRatio("shell"),
	{Name: "sandbox-overhead-cgroup", Section: "Sandbox", Pkg: "./internal/sandbox/",
		Bench: "^BenchmarkOverhead$", Benchtime: "200x", QuickBenchtime: "30x",
		Line: "BenchmarkOverhead/cgroup", Metric: "cpu-ms/run", Unit: "CPU ms/run", Needs: []Need{needBwrap}},

	// IFEvalCode scoring (the interpreted languages; compiled ones take minutes).
	ifevalScore("shell"), ifevalScore("php"), ifevalScore("python"), ifevalScore("javascript"),

	// Model gateway.
	{Name: "gateway-zero-latency", Section: "Model gateway", Pkg: "./internal/gateway/",
		Bench: "^BenchmarkZeroLatency$", Benchtime: "2s", QuickBenchtime: "1s",
		Line: "BenchmarkZeroLatency/gateway-no-cache", RefLine: "BenchmarkZeroLatency/bare-go-openai", Metric: "calls/s",
		Unit: "× bare go-openai", RefNote: "bare go-openai, same run"},
	{Name: "gateway-client-cpu", Section: "Model gateway", Pkg: "./internal/gateway/",
		Bench: "^BenchmarkClientOverhead$", Benchtime: "2s", QuickBenchtime: "300ms",
		Line: "BenchmarkClientOverhead/gateway-no-cache", Metric: "cpu-µs/call", Unit: "CPU µs/call"},
	{Name: "gateway-200ms", Section: "Model gateway", Pkg: "./internal/gateway/",
		Bench: "^BenchmarkThroughput200ms$", Benchtime: "5x", QuickBenchtime: "1x",
		Line: "BenchmarkThroughput200ms", Metric: "%-of-320", Unit: "% of 320 calls/s", Goal: Goal{AtLeast: true, Value: 95}},
	{Name: "metrics-observe", Section: "What metrics cost a gateway call", Pkg: "./internal/metrics/",
		Bench: "^BenchmarkObserve$", QuickBenchtime: "200ms",
		Line: "BenchmarkObserve/answered", Metric: "ns/op", Scale: 1e-3, Unit: "µs/call"},
	{Name: "metrics-overhead", Section: "What metrics cost a gateway call", Pkg: "./internal/gateway/",
		Bench: "^BenchmarkMetricsOverhead$", QuickBenchtime: "1s",
		Line: "BenchmarkMetricsOverhead/metrics/no-cache", RefLine: "BenchmarkMetricsOverhead/no-metrics/no-cache", Metric: "cpu-µs/call",
		Unit: "× CPU without metrics", RefNote: "the same calls without metrics, same run"},

	// BFCL AST checker.
	{Name: "bfcl-check", Section: "BFCL AST checker", Pkg: "./scorers/bfcl/",
		Bench: "^BenchmarkCheck$", Benchtime: "300x", QuickBenchtime: "30x", Flags: []string{"-cpu", "1"},
		// The checker's own rate: a ratio to the reference needs the
		// reference run at the same time on the same host (its rate varies
		// twofold between hosts of this kind), which is bfcl-ratio-paired.
		Line: "BenchmarkCheck", Metric: "checks/cpu-s", Unit: "checks/CPU-s"},
	{Name: "bfcl-ratio-paired", Section: "BFCL AST checker", Kind: Script,
		Args:    []string{"deploy/dev/bfcl-ratio.sh", "$BENCHLINE_BFCL_CHECKOUT"},
		Pattern: bfclMedianRatio, Unit: "× reference", RefNote: "the reference run at the same time",
		QuickArgs: []string{"deploy/dev/bfcl-ratio.sh", "$BENCHLINE_BFCL_CHECKOUT", "1"},
		Goal:      Goal{AtLeast: true, Value: 50}, Needs: []Need{needBFCL, {What: "python3", Present: lookPath("python3")}}},
	{Name: "bfcl-score-lines", Section: "BFCL AST checker", Pkg: "./scorers/bfcl/",
		Bench: "^BenchmarkScoreLines$", Flags: []string{"-count", "3"}, QuickBenchtime: "1x",
		Line: "BenchmarkScoreLines", Metric: "checks/cpu-s", Unit: "lines/CPU-s"},

	// Rubric scoring.
	{Name: "medrubric-score", Section: "Rubric scoring (medrubric)", Pkg: "./datasets/medrubric",
		Bench: "^BenchmarkScore$", Benchtime: "2s", QuickBenchtime: "200ms", Flags: []string{"-cpu", "1", "-count", "5"},
		Line: "BenchmarkScore", Metric: "ns/turn", Scale: 1e-3, Unit: "µs/turn"},

	// Section splitting.
	{Name: "reporteval-sections", Section: "Section splitting (reporteval)", Pkg: "./scorers/reporteval",
		Bench: ".", QuickBenchtime: "3x", Flags: []string{"-cpu", "1", "-count", "5"},
		Line: "BenchmarkSections", Metric: "reports/cpu-s", Unit: "reports/CPU-s"},
	{Name: "reporteval-score-lines", Section: "Section splitting (reporteval)", Pkg: "./scorers/reporteval",
		Bench: ".", QuickBenchtime: "3x", Flags: []string{"-cpu", "1", "-count", "5"},
		Line: "BenchmarkScoreSectionsLines", Metric: "reports/cpu-s", Unit: "reports/CPU-s"},

	// Role-play dialogues.
	{Name: "rmtbench-dialogues-20", Section: "Role-play dialogues (rmtbench)", Pkg: "./datasets/rmtbench",
		Bench: "^BenchmarkDialogues$", Benchtime: "3x", QuickBenchtime: "1x", Flags: []string{"-count", "3"},
		Line: "BenchmarkDialogues/simulated-20", Metric: "cpu-µs/turn", Scale: 1e-3, Unit: "CPU ms/turn"},
	{Name: "rmtbench-stack", Section: "Role-play dialogues (rmtbench)", Pkg: "./internal/integration/",
		Bench: "^BenchmarkRMTBenchThroughput$", Benchtime: "3x", QuickBenchtime: "1x", Flags: []string{"-count=1"},
		Line: "BenchmarkRMTBenchThroughput", Metric: "turns/s", Unit: "turns/s", Needs: []Need{needMinutes}},

	// Statistics.
	{Name: "stats-bootstrap-samples", Section: "Statistics", Pkg: "./internal/stats/",
		Bench: "PairedBootstrap|Draws", QuickBenchtime: "1x", Flags: []string{"-benchmem", "-count", "3"},
		Line: "BenchmarkPairedBootstrap/samples", Metric: "ns/op", Scale: 1e-6, Unit: "ms/comparison"},
	{Name: "stats-bootstrap-clusters", Section: "Statistics", Pkg: "./internal/stats/",
		Bench: "PairedBootstrap|Draws", QuickBenchtime: "1x", Flags: []string{"-benchmem", "-count", "3"},
		Line: "BenchmarkPairedBootstrap/clusters", Metric: "ns/op", Scale: 1e-6, Unit: "ms/comparison"},

	// Leaderboard site.
	{Name: "site-write-cpu", Section: "Leaderboard site", Pkg: "./internal/site/",
		Bench: "^BenchmarkWrite$", Benchtime: "3x", QuickBenchtime: "1x",
		Line: "BenchmarkWrite", Metric: "cpu-s/op", Unit: "CPU s/write"},

	// The served explorer at the reply limit.
	{Name: "site-explorer-200-searches-heap", Section: "The served explorer at the reply limit", Pkg: "./internal/site/",
		Bench: "^BenchmarkExplorerConcurrentSearches$", Benchtime: "3x", QuickBenchtime: "1x",
		Line: "BenchmarkExplorerConcurrentSearches", Metric: "peak-heap-MiB", Unit: "MiB heap, 200 searches of 1 MiB replies",
		Goal: Goal{Value: 256}},
	{Name: "site-explorer-first-search", Section: "The served explorer at the reply limit", Pkg: "./internal/site/",
		Bench: "^BenchmarkExplorerFirstSearch$", Benchtime: "3x", QuickBenchtime: "1x",
		Line: "BenchmarkExplorerFirstSearch", Metric: "first-search-ms", Unit: "ms, first search, 21,000 replies of 20 KB",
		Goal: Goal{Value: 2000}},
	{Name: "site-explorer-build-heap", Section: "The served explorer at the reply limit", Pkg: "./internal/site/",
		Bench: "^BenchmarkExplorerFirstSearch$", Benchtime: "3x", QuickBenchtime: "1x",
		Line: "BenchmarkExplorerFirstSearch", Metric: "build-peak-MiB", Unit: "MiB heap, index of 21,000 replies of 20 KB",
		Goal: Goal{Value: 256}},
}

func sandboxRatio(group string) Figure {
	f := Figure{Name: "sandbox-ratio-" + group, Section: "Sandbox", Pkg: "./scorers/ifevalcode/",
		Bench: "^BenchmarkFixturePrograms$", Benchtime: "200x", QuickBenchtime: "40x",
		Line: "BenchmarkFixturePrograms/" + group + "/sandbox", RefLine: "BenchmarkFixturePrograms/" + group + "/plain",
		Metric: "runs/s", Unit: "× plain", RefNote: "the same programs unsandboxed, same run",
		Needs: []Need{needSandbox}}
	if group != "shell" { // the goal is for the interpreted languages
		f.Goal = Goal{AtLeast: true, Value: 0.8}
	}
	return f
}

func helloRatio(l string) Figure {
	f := Figure{Name: "sandbox-hello-ratio-" + l, Section: "Sandbox", Pkg: "./internal/sandbox/lang/",
		Bench: "Throughput/(python|javascript|php|shell)", Benchtime: "100x", QuickBenchtime: "30x",
		Line: "BenchmarkThroughput/" + l + "/sandbox", RefLine: "BenchmarkThroughput/" + l + "/plain",
		Metric: "runs/s", Unit: "× plain", RefNote: "the same programs unsandboxed, same run",
		Needs: []Need{needSandbox}}
	if l != "shell" {
		f.Goal = Goal{AtLeast: true, Value: 0.8}
	}
	return f
}

func ifevalScore(l string) Figure {
	return Figure{Name: "ifevalcode-score-" + l, Section: "IFEvalCode scoring", Pkg: "./scorers/ifevalcode/",
		Bench: "^BenchmarkScoreLines/(shell|php|python|javascript)$", Benchtime: "3x", QuickBenchtime: "1x",
		Line: "BenchmarkScoreLines/" + l, Metric: "responses/s", Unit: "replies/s", Needs: []Need{needSandbox}}
}

// Excluded are the docs/PERFORMANCE.md sections with no figure in the
// registry, and why.
var Excluded = map[string]string{
	"Cancellation: how soon a cancelled run stops writing":  "a test that logs how long writes go on after a cancel and asserts no time: go test -count=1 -run TestRunStatesCancelAndProgress -v ./internal/integration/",
	"The demo and its board":                                "the wall time of a whole `benchline demo` (4–5 minutes fresh), read with /usr/bin/time -v",
	"Run explorer at a million samples":                     "two 1,000,000-sample runs evaluated first (about 20 minutes), then refreshes timed by hand and the served pages measured in Chromium by go test -run TestMeasureExplorer ./internal/site/ (the section's commands)",
	"Cited sources without a route (reporteval factuality)": "a Go benchmark over the upstream reports' 2,910 sources: go test -run '^$' -bench BenchmarkNoRouteReportSources -benchtime 1x ./internal/webfetch/",
	"Memory at the input limits":                            "peak RSS of a separate worker process fed inputs at the limits (300 MB and 2 GB lines, 20 MB and 300 MB replies), read from /proc by hand (the section's commands)",
}
