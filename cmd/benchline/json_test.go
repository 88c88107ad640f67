package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/benchline/benchline/internal/aggregate"
	"github.com/benchline/benchline/internal/catalog"
	"github.com/benchline/benchline/internal/wfclient"
	"github.com/benchline/benchline/workflows"
)

// jsonOutputs are the types the commands print with --json (or always, for
// bench and sandbox): one entry per command's output.
var jsonOutputs = map[string]any{
	"dataset build --json":       buildReport{},
	"dataset ls --json":          []catalog.Entry{},
	"dataset show":               catalog.Manifest{},
	"eval --json":                aggregate.Summary{},
	"leaderboard refresh --json": wfclient.RefreshReport{},
	"runs ls --json":             []runListing{},
	"runs show --json":           runReport{},
	"sandbox run":                sandboxRunOutput{},
}

// TestJSONOutputsAreSnakeCase fills every field of each command's output
// type (so omitempty fields appear too), marshals it and fails on any key
// that is not snake_case, as the files' keys are: issue #11 found `Version`
// and `Rows` from `dataset build --json`.
func TestJSONOutputsAreSnakeCase(t *testing.T) {
	for cmd, v := range jsonOutputs {
		t.Run(cmd, func(t *testing.T) {
			p := reflect.New(reflect.TypeOf(v))
			fill(p.Elem(), 0)
			b, err := json.Marshal(p.Interface())
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			keys := 0
			walkKeys(doc, "", func(path, key string) {
				keys++
				if key == "" || strings.ContainsFunc(key, func(r rune) bool { return unicode.IsUpper(r) || r == ' ' || r == '-' }) {
					t.Errorf("%s: key %q at %s is not snake_case", cmd, key, path)
				}
			})
			if keys == 0 {
				t.Errorf("%s: no keys in %s", cmd, b)
			}
		})
	}
}

// TestBuildReportKeepsEveryField checks the build report copies what the
// workflow's result holds (a field added there and not here is lost).
func TestBuildReportKeepsEveryField(t *testing.T) {
	var in workflows.BuildDatasetResult
	fill(reflect.ValueOf(&in).Elem(), 0)
	out := newBuildReport(in)
	b, _ := json.Marshal(out)
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	if n, want := len(doc), reflect.TypeOf(in).NumField(); n != want {
		t.Errorf("build report has %d keys, the workflow result %d fields: %s", n, want, b)
	}
}

// fill sets every settable field of v to a non-zero value; maps get one
// entry keyed "key", slices one element.
func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1, 0).UTC()))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		if k.Kind() == reflect.String {
			k.SetString("key")
		} else {
			fill(k, depth+1)
		}
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	}
}

// walkKeys calls fn for every object key in doc, except the keys of maps
// whose keys are data (the filled maps' "key").
func walkKeys(doc any, path string, fn func(path, key string)) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if k != "key" {
				fn(path, k)
			}
			walkKeys(v, path+"."+k, fn)
		}
	case []any:
		for _, v := range d {
			walkKeys(v, path+"[]", fn)
		}
	}
}
