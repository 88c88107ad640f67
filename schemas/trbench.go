package schemas

// TRBenchPairTable is the table written by the trbench dataset builder.
// Version 2 added reference_response.
var TRBenchPairTable = Declare[TRBenchPair]("trbench_pair", 2)

// TRBenchPair is one pairwise critique task of TRBench-style reward-model
// evaluation. TRBench holds every pair twice, with the two responses
// swapped; benchline keeps both orders in one row (Order1 and Order2) so
// that a shard of rows always holds both halves of a pair.
type TRBenchPair struct {
	// UUID is the row index within the version.
	UUID int64 `parquet:"uuid" json:"uuid"`
	// PairID is unique within a version; RawID is the BFCL item id.
	PairID string `parquet:"pair_id" json:"pair_id"`
	RawID  string `parquet:"raw_id" json:"raw_id"`
	// TaskSource is the BFCL category of the item (per-source W-Avg).
	TaskSource string `parquet:"task_source,dict" json:"task_source"`
	// ErrorType is the BFCL checker error type of the rejected response.
	ErrorType string `parquet:"error_type,dict" json:"error_type"`
	// ChatHistoryJSON is the conversation judged: a JSON list of {role,
	// content}, starting with a system message that lists the tools.
	ChatHistoryJSON string `parquet:"chat_history_json" json:"chat_history_json"`
	ToolsJSON       string `parquet:"tools_json" json:"tools_json"`

	ChosenResponse     string  `parquet:"chosen_response" json:"chosen_response"`
	ChosenResponseFrom string  `parquet:"chosen_response_from,dict" json:"chosen_response_from"`
	ChosenReward       float64 `parquet:"chosen_response_reward" json:"chosen_response_reward"`
	ChosenRewardMsg    string  `parquet:"chosen_response_reward_message,dict" json:"chosen_response_reward_message"`
	RejectResponse     string  `parquet:"reject_response" json:"reject_response"`
	RejectResponseFrom string  `parquet:"reject_response_from,dict" json:"reject_response_from"`
	RejectReward       float64 `parquet:"reject_response_reward" json:"reject_response_reward"`
	RejectRewardMsg    string  `parquet:"reject_response_reward_message,dict" json:"reject_response_reward_message"`
	// ReferenceResponse is the item's ground truth rendered like the
	// replies (<tool_call> blocks, first acceptable values): the same text
	// as ChosenResponse for pairs from failing outputs, the item's correct
	// answer for pairs from toolpref. It is not shown to judges; the
	// baseline reward models compare replies with it.
	ReferenceResponse string `parquet:"reference_response" json:"reference_response"`

	// PromptOrder1 is the critique prompt with the chosen response as
	// response 1 (GroundTruthOrder1 "1"); PromptOrder2 has them swapped
	// (GroundTruthOrder2 "2").
	PromptOrder1      string `parquet:"prompt_order1" json:"prompt_order1"`
	GroundTruthOrder1 string `parquet:"ground_truth_order1,dict" json:"ground_truth_order1"`
	PromptOrder2      string `parquet:"prompt_order2" json:"prompt_order2"`
	GroundTruthOrder2 string `parquet:"ground_truth_order2,dict" json:"ground_truth_order2"`

	// PairSource says where the pair came from: "bfcl_failing" (ground truth
	// vs a recorded failing output) or "toolpref@<version>".
	PairSource string `parquet:"pair_source,dict" json:"pair_source"`
	// SourceFile and SourceLine give provenance of the rejected response
	// (empty/0 for pairs read from a toolpref version).
	SourceFile string `parquet:"source_file,dict" json:"source_file"`
	SourceLine int32  `parquet:"source_line" json:"source_line"`
}
