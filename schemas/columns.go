package schemas

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// rowTypes maps every declared table (Declare) to its row type, so a
// reader can check a file's columns against the table its manifest
// promises (Columns).
var rowTypes = map[Table]reflect.Type{}

// Declare declares table name at version, whose rows are T, and returns
// it: Columns then knows its columns, so every reader of a dataset version
// checks its files have exactly them (catalog.Checked). A benchmark
// declares its table where its row type lives, as a package variable
// (var ItemTable = schemas.Declare[Item]("x_item", 1)), so nothing else
// lists it; internal/registry's tests check every registered builder's
// table is declared. Declaring one table with two row types panics.
func Declare[T any](name string, version int) Table {
	t := Table{Name: name, Version: version}
	typ := reflect.TypeFor[T]()
	if prev, dup := rowTypes[t]; dup && prev != typ {
		panic(fmt.Sprintf("schemas: table %s v%d declared with %s and %s", name, version, prev, typ))
	}
	rowTypes[t] = typ
	return t
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
