package schemas

// ResultRowTable is the per-sample result table of an evaluation run,
// written as runs/<run-id>/results/shard-NNNNN.parquet.
var ResultRowTable = Declare[ResultRow]("result_row", 1)

// Error classes of a result row beyond the model failures a task reports.
const (
	// ErrorClassInfrastructure marks a sample that could not be evaluated
	// (gateway retries exhausted, sandbox broken): reported, never scored.
	ErrorClassInfrastructure = "infrastructure"
	// ErrorClassBadSample marks a dataset row the task could not evaluate
	// (it breaks the task's schema): reported with its id, never scored.
	ErrorClassBadSample = "bad_sample"
)

// Scored reports whether a row with this error class counts in the metrics.
func Scored(errorClass string) bool {
	return errorClass != ErrorClassInfrastructure && errorClass != ErrorClassBadSample
}

// ResultRow is one evaluated sample. Every benchmark writes the same columns;
// what is specific to a benchmark goes into Metrics (named scores) and
// DetailsJSON.
type ResultRow struct {
	RunID       string `parquet:"run_id,dict" json:"run_id"`
	SampleID    string `parquet:"sample_id" json:"sample_id"`
	SampleIndex int64  `parquet:"sample_index" json:"sample_index"` // position in the dataset version
	Shard       int32  `parquet:"shard" json:"shard"`
	Category    string `parquet:"category,dict" json:"category"`
	Model       string `parquet:"model,dict" json:"model"`
	PromptHash  string `parquet:"prompt_hash" json:"prompt_hash"`
	Response    string `parquet:"response" json:"response"`
	// Metrics are the task's named scores; empty for infrastructure failures.
	Metrics map[string]float64 `parquet:"metrics" json:"metrics"`
	// ErrorClass is empty when the model answered, a task's model-failure
	// class (scored), or "infrastructure" (not scored).
	ErrorClass       string  `parquet:"error_class,dict" json:"error_class,omitempty"`
	ErrorMessage     string  `parquet:"error_message" json:"error_message,omitempty"`
	Calls            int32   `parquet:"calls" json:"calls"`
	CacheHits        int32   `parquet:"cache_hits" json:"cache_hits"`
	Attempts         int32   `parquet:"attempts" json:"attempts"`
	PromptTokens     int64   `parquet:"prompt_tokens" json:"prompt_tokens"`
	CompletionTokens int64   `parquet:"completion_tokens" json:"completion_tokens"`
	CostUSD          float64 `parquet:"cost_usd" json:"cost_usd"`
	LatencyMS        float64 `parquet:"latency_ms" json:"latency_ms"`
	DetailsJSON      string  `parquet:"details_json" json:"details_json,omitempty"`
}

// SummaryRowTable is the aggregate of a run, runs/<run-id>/summary.parquet:
// one row per (scope, metric).
var SummaryRowTable = Declare[SummaryRow]("summary_row", 1)

// SummaryRow is one metric over one scope ("overall" or "category:<name>").
type SummaryRow struct {
	RunID    string  `parquet:"run_id,dict" json:"run_id"`
	Dataset  string  `parquet:"dataset,dict" json:"dataset"`
	Model    string  `parquet:"model,dict" json:"model"`
	Scope    string  `parquet:"scope,dict" json:"scope"`
	Metric   string  `parquet:"metric,dict" json:"metric"`
	N        int64   `parquet:"n" json:"n"`
	Mean     float64 `parquet:"mean" json:"mean"`
	StdErr   float64 `parquet:"stderr" json:"stderr"`
	CILow    float64 `parquet:"ci_low" json:"ci_low"`
	CIHigh   float64 `parquet:"ci_high" json:"ci_high"`
	CIMethod string  `parquet:"ci_method,dict" json:"ci_method"`
}
