package schemas

// ToolPrefPairTable is the table written by the toolpref dataset builder.
//
// Version 2 added chosen_temperature and rejected_temperature.
var ToolPrefPairTable = Declare[ToolPrefPair]("toolpref_pair", 2)

// ToolPrefPair is one preference pair over function-calling responses: two
// candidate replies to the same BFCL-format item, the better-scored one
// chosen, with the dimensions the pair was sampled over.
type ToolPrefPair struct {
	// PairID is "<item id>/<chosen candidate>/<rejected candidate>"; unique
	// within a version.
	PairID string `parquet:"pair_id" json:"pair_id"`
	// ItemID and Category identify the BFCL-format item the pair answers.
	ItemID   string `parquet:"item_id" json:"item_id"`
	Category string `parquet:"category,dict" json:"category"`
	// MessagesJSON is the conversation (a JSON list of {role, content}
	// messages, the item's first turn); ToolsJSON is the item's function
	// list (BFCL's "function", JSON).
	MessagesJSON string `parquet:"messages_json" json:"messages_json"`
	ToolsJSON    string `parquet:"tools_json" json:"tools_json"`
	// GroundTruthJSON is the item's possible answer (BFCL "ground_truth").
	GroundTruthJSON string `parquet:"ground_truth_json" json:"ground_truth_json"`

	// Chosen and Rejected are the assistant replies as text (tool calls as
	// Hermes <tool_call> blocks, or the model's own text).
	Chosen       string  `parquet:"chosen" json:"chosen"`
	ChosenScore  float64 `parquet:"chosen_score" json:"chosen_score"`
	ChosenSource string  `parquet:"chosen_source,dict" json:"chosen_source"`
	ChosenError  string  `parquet:"chosen_error,dict" json:"chosen_error"` // BFCL error type, "" when valid
	// ChosenTemperature is the sampling temperature of a model reply; null
	// for the ground truth, synthetic replies and sampled replies given
	// without one.
	ChosenTemperature *float64 `parquet:"chosen_temperature,optional" json:"chosen_temperature"`
	Rejected          string   `parquet:"rejected" json:"rejected"`
	RejectedScore     float64  `parquet:"rejected_score" json:"rejected_score"`
	// RejectedSource is the model (or synthetic generator) that produced the
	// rejected reply; RejectedKind is the perturbation for synthetic
	// candidates ("wrong_value", ...) and "sampled" for model candidates.
	RejectedSource      string   `parquet:"rejected_source,dict" json:"rejected_source"`
	RejectedKind        string   `parquet:"rejected_kind,dict" json:"rejected_kind"`
	RejectedError       string   `parquet:"rejected_error,dict" json:"rejected_error"`
	RejectedTemperature *float64 `parquet:"rejected_temperature,optional" json:"rejected_temperature"`

	// The sampling dimensions. Source is RejectedSource; Intensity buckets
	// the score gap (low, medium, high); Complexity buckets the ground truth
	// (simple, moderate, complex) from NumCalls and NumArgs.
	Source     string  `parquet:"source,dict" json:"source"`
	Gap        float64 `parquet:"gap" json:"gap"`
	Intensity  string  `parquet:"intensity,dict" json:"intensity"`
	Complexity string  `parquet:"complexity,dict" json:"complexity"`
	NumCalls   int32   `parquet:"num_calls" json:"num_calls"`
	NumArgs    int32   `parquet:"num_args" json:"num_args"`
}
