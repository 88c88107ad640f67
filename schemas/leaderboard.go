package schemas

// ScoreRowTable is a board stamp's scores.parquet
// (leaderboards/<board>/<stamp>/scores.parquet): one row per (benchmark,
// model) cell, the same values as the cells of scores.json.
var ScoreRowTable = Table{Name: "score_row", Version: 1}

// ScoreRow is one cell of a board stamp: a model's headline metric on one
// benchmark.
type ScoreRow struct {
	Board    string  `parquet:"board,dict" json:"board"`
	Stamp    string  `parquet:"stamp,dict" json:"stamp"`
	Dataset  string  `parquet:"dataset,dict" json:"dataset"`
	Version  string  `parquet:"version,dict" json:"version"`
	Model    string  `parquet:"model,dict" json:"model"`
	Baseline bool    `parquet:"baseline" json:"baseline"`
	Metric   string  `parquet:"metric,dict" json:"metric"`
	Mean     float64 `parquet:"mean" json:"mean"`
	StdErr   float64 `parquet:"stderr" json:"stderr"`
	CILow    float64 `parquet:"ci_low" json:"ci_low"`
	CIHigh   float64 `parquet:"ci_high" json:"ci_high"`
	CIMethod string  `parquet:"ci_method,dict" json:"ci_method"`
	N        int64   `parquet:"n" json:"n"`
	RankLow  int32   `parquet:"rank_low" json:"rank_low"`
	RankHigh int32   `parquet:"rank_high" json:"rank_high"`
	RunID    string  `parquet:"run_id" json:"run_id"`
}
