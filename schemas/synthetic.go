package schemas

// SyntheticRowTable is the table written by the synthetic dataset builder,
// used to measure the build pipeline at any size.
var SyntheticRowTable = Declare[SyntheticRow]("synthetic_row", 1)

// SyntheticRow is a generated benchmark-like row: an id, a category, a prompt
// of a few hundred bytes and a reference answer.
type SyntheticRow struct {
	ID        string  `parquet:"id" json:"id"`
	Index     int64   `parquet:"index" json:"index"`
	Category  string  `parquet:"category,dict" json:"category"`
	Prompt    string  `parquet:"prompt" json:"prompt"`
	Reference string  `parquet:"reference" json:"reference"`
	Weight    float64 `parquet:"weight" json:"weight"`
}
