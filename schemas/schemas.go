// Package schemas holds the Go struct of every Parquet table benchline writes,
// each with an explicit schema version. A version changes whenever a column is
// added, removed, renamed or changes type; readers check it in the manifest.
//
// Struct tags are parquet-go's: `parquet:"name[,options]"`. Nested data that
// varies by benchmark (chat turns, JSON schemas, ground truth) is stored as
// JSON text columns: every Parquet reader can load them, and DuckDB can query
// them with its JSON functions.
package schemas

// Table names a schema and its version.
type Table struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
}
