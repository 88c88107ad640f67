package schemas

import (
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// rowTypes maps every table a dataset builder writes (and the engine's own
// tables) to its row type, so a reader can check a file's columns against
// the table its manifest promises (Columns). A table a builder writes must
// be listed: internal/registry's tests check every registered builder's.
var rowTypes = map[Table]reflect.Type{
	BFCLItemTable:         reflect.TypeFor[BFCLItem](),
	IFEvalCodeItemTable:   reflect.TypeFor[IFEvalCodeItem](),
	MedRubricItemTable:    reflect.TypeFor[MedRubricItem](),
	OmniClozeItemTable:    reflect.TypeFor[OmniClozeItem](),
	ReportEvalTopicTable:  reflect.TypeFor[ReportEvalTopic](),
	RMTBenchDialogueTable: reflect.TypeFor[RMTBenchDialogue](),
	SyntheticRowTable:     reflect.TypeFor[SyntheticRow](),
	ToolPrefPairTable:     reflect.TypeFor[ToolPrefPair](),
	TRBenchPairTable:      reflect.TypeFor[TRBenchPair](),
	ResultRowTable:        reflect.TypeFor[ResultRow](),
	SummaryRowTable:       reflect.TypeFor[SummaryRow](),
}

// Columns returns the sorted names of the top-level columns of table t, as
// parquet-go writes its row type, and false when t (name and version) is
// not a table this package knows.
func Columns(t Table) ([]string, bool) {
	typ, ok := rowTypes[t]
	if !ok {
		return nil, false
	}
	fields := parquet.SchemaOf(reflect.New(typ).Interface()).Fields()
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Name()
	}
	slices.Sort(cols)
	return cols, true
}
