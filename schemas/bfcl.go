package schemas

// BFCLItemTable is the table written by the bfcl dataset builder.
var BFCLItemTable = Declare[BFCLItem]("bfcl_item", 1)

// BFCLItem is one Berkeley Function Calling Leaderboard test item.
type BFCLItem struct {
	// ID is BFCL's item id, e.g. "simple_python_0"; unique within a version.
	ID string `parquet:"id" json:"id"`
	// Category is BFCL's test category, e.g. "simple_python", "live_parallel".
	Category string `parquet:"category,dict" json:"category"`
	// Language is the language the calls are checked in: python, java or javascript.
	Language string `parquet:"language,dict" json:"language"`
	// TurnsJSON is BFCL's "question": a JSON list of turns, each a list of
	// {role, content} messages.
	TurnsJSON string `parquet:"turns_json" json:"turns_json"`
	// FunctionsJSON is BFCL's "function": a JSON list of function schemas.
	FunctionsJSON string `parquet:"functions_json" json:"functions_json"`
	// GroundTruthJSON is the possible answer's "ground_truth" (a JSON list of
	// {func: {param: [acceptable values]}}); null for categories without one
	// (relevance, irrelevance).
	GroundTruthJSON *string `parquet:"ground_truth_json,optional" json:"ground_truth_json,omitempty"`
	// NumTurns and NumFunctions describe the item's shape for filtering.
	NumTurns     int32 `parquet:"num_turns" json:"num_turns"`
	NumFunctions int32 `parquet:"num_functions" json:"num_functions"`
	// SourceFile and SourceLine say where the item came from (provenance).
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
}
