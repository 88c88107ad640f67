package bfcl

import (
	"os"
	"testing"

	"github.com/benchline/benchline/internal/toolcall"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := toolcall.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func funcsOf(t *testing.T, s string) []Function {
	t.Helper()
	f, err := FunctionsFromValue(decode(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func answersOf(t *testing.T, s string) []Answer {
	t.Helper()
	a, err := AnswersFromValue(decode(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func callsOf(t *testing.T, s string) []Call {
	t.Helper()
	c, isFC := CallsFromValue(decode(t, s))
	if !isFC {
		t.Fatalf("%s is not in BFCL call format", s)
	}
	return c
}

// Functions and ground truths from benchmarks.md section 1 (BFCL
// simple_python_0..2, parallel_0) and small synthetic ones for each rule.
const (
	triangleFuncs = `[{"name": "calculate_triangle_area", "parameters": {"type": "dict", "properties": {
		"base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}}, "required": ["base", "height"]}}]`
	triangleGT     = `[{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]`
	factorialFuncs = `[{"name": "math.factorial", "parameters": {"type": "dict", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}]`
	factorialGT    = `[{"math.factorial": {"number": [5]}}]`
	hypotFuncs     = `[{"name": "math.hypot", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}, "z": {"type": "integer"}}, "required": ["x", "y"]}}]`
	hypotGT        = `[{"math.hypot": {"x": [4], "y": [5], "z": ["", 0]}}]`
	spotifyFuncs   = `[{"name": "spotify.play", "parameters": {"type": "dict", "properties": {"artist": {"type": "string"}, "duration": {"type": "integer"}}, "required": ["artist", "duration"]}}]`
	spotifyGT      = `[{"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}}, {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}}]`
	chessFuncs     = `[{"name": "board_game.chess.get_top_players", "parameters": {"type": "dict", "properties": {"location": {"type": "string"}, "minimum_rating": {"type": "integer"}, "number_of_players": {"type": "integer"}}, "required": ["location", "minimum_rating"]}},
		{"name": "lottery.get", "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": []}}]`
	chessGT     = `[{"board_game.chess.get_top_players": {"location": ["New York", "NY"], "minimum_rating": [2300], "number_of_players": ["", 10]}}]`
	filterFuncs = `[{"name": "list_items", "parameters": {"type": "dict", "properties": {"filter": {"type": "string"}}, "required": ["filter"]}}]`
	filterGT    = `[{"list_items": {"filter": ["name IN ('alpha', 'beta', 'gamma')"]}}]`
	richFuncs   = `[{"name": "f", "parameters": {"type": "dict", "properties": {
		"price": {"type": "float"}, "flag": {"type": "boolean"}, "date": {"type": "string"},
		"tags": {"type": "array", "items": {"type": "string"}}, "nums": {"type": "array", "items": {"type": "integer"}},
		"point": {"type": "tuple", "items": {"type": "float"}}, "opts": {"type": "dict"},
		"rows": {"type": "array", "items": {"type": "dict"}}, "count": {"type": "integer"}, "anything": {"type": "any"}}, "required": []}}]`
	richGT = `[{"f": {"price": [5.0, ""], "flag": [true, ""], "date": ["April 1, 2024", ""], "tags": [["a", "b"], ""],
		"nums": [[1, 2], ""], "point": [[1.5, 2.0], ""], "opts": [{"k": ["v"], "opt": ["", 1]}, ""],
		"rows": [[{"a": [1]}, {"a": [2]}], ""], "count": ["n_items", ""], "anything": ["x", ""]}}]`
	strictGT = `[{"f": {"tags": [["a", "b"]], "nums": [[1, 2]], "point": [[1.5, 2.0]], "rows": [[{"a": [1]}, {"a": [2]}]]}}]`
)

type checkCase struct {
	name      string
	lang      Language
	category  string
	funcs, gt string
	output    string
	u2d       bool
	wantValid bool
	wantType  string
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	exportUnitCases(t, cases)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lang := tc.lang
			if lang == "" {
				lang = Python
			}
			got := Checker{UnderscoreToDot: tc.u2d}.Check(lang, tc.category, funcsOf(t, tc.funcs), callsOf(t, tc.output), answersOf(t, tc.gt))
			if got.Valid != tc.wantValid || got.ErrorType != tc.wantType {
				t.Fatalf("got valid=%v error_type=%q (%v); want valid=%v error_type=%q", got.Valid, got.ErrorType, got.Detail(), tc.wantValid, tc.wantType)
			}
			if !got.Valid && got.Detail() == "" {
				t.Fatal("invalid result without an error message")
			}
		})
	}
}

func TestCheckSimple(t *testing.T) {
	const sp = "simple_python"
	runCheckCases(t, []checkCase{
		{"ground truth", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": "units"}}]`, false, true, ""},
		{"omitting optional unit passes", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5}}]`, false, true, ""},
		{"omitting base is missing_required", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"height": 5}}]`, false, false, "simple_function_checker:missing_required"},
		{"wrong function name", Python, sp, triangleFuncs, triangleGT, `[{"triangle_area": {"base": 10, "height": 5}}]`, false, false, "simple_function_checker:wrong_func_name"},
		{"two calls in simple", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5}}, {"calculate_triangle_area": {"base": 10, "height": 5}}]`, false, false, "simple_function_checker:wrong_count"},
		{"no call in simple", Python, sp, triangleFuncs, triangleGT, `[]`, false, false, "simple_function_checker:wrong_count"},
		{"unknown parameter", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5, "color": "red"}}]`, false, false, "simple_function_checker:unexpected_param"},
		{"string for integer", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": "10", "height": 5}}]`, false, false, "type_error:simple"},
		{"bool is never an integer", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": true, "height": 5}}]`, false, false, "type_error:simple"},
		{"float is not an integer", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10.0, "height": 5}}]`, false, false, "type_error:simple"},
		{"wrong integer value", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 6}}]`, false, false, "value_error:others"},
		{"string standardised", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": " U-N_I.T/S* ^"}}]`, false, true, ""},
		{"wrong string", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": "meters"}}]`, false, false, "value_error:string"},
		{"empty string matches the omittable marker", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": ""}}]`, false, true, ""},
		{"first failing argument decides the error", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"base": 10, "height": 5, "unit": "m", "zz": 1}}]`, false, false, "value_error:string"},
		{"argument order decides the error (reversed)", Python, sp, triangleFuncs, triangleGT, `[{"calculate_triangle_area": {"zz": 1, "base": 10, "height": 5, "unit": "m"}}]`, false, false, "simple_function_checker:unexpected_param"},
		{"factorial", Python, sp, factorialFuncs, factorialGT, `[{"math.factorial": {"number": 5}}]`, false, true, ""},
		{"dot name as underscore without underscore_to_dot", Python, sp, factorialFuncs, factorialGT, `[{"math_factorial": {"number": 5}}]`, false, false, "simple_function_checker:wrong_func_name"},
		{"dot name as underscore with underscore_to_dot", Python, sp, factorialFuncs, factorialGT, `[{"math_factorial": {"number": 5}}]`, true, true, ""},
		{"underscore_to_dot rejects the dotted name", Python, sp, factorialFuncs, factorialGT, `[{"math.factorial": {"number": 5}}]`, true, false, "simple_function_checker:wrong_func_name"},
		{"hypot omitting z", Python, sp, hypotFuncs, hypotGT, `[{"math.hypot": {"x": 4, "y": 5}}]`, false, true, ""},
		{"hypot with z=0", Python, sp, hypotFuncs, hypotGT, `[{"math.hypot": {"x": 4, "y": 5, "z": 0}}]`, false, true, ""},
		{"hypot with z=1", Python, sp, hypotFuncs, hypotGT, `[{"math.hypot": {"x": 4, "y": 5, "z": 1}}]`, false, false, "value_error:others"},
		{"missing optional without marker", Python, sp, filterFuncs, `[{"list_items": {"filter": ["a"], "limit": [10]}}]`, `[{"list_items": {"filter": "a"}}]`, false, false, "simple_function_checker:missing_optional"},
		{"filter with quotes standardised", Python, sp, filterFuncs, filterGT, `[{"list_items": {"filter": "name in (\"alpha\", \"beta\", \"gamma\")"}}]`, false, true, ""},
		{"TRBench live_multiple_1033 reject", Python, sp, filterFuncs, filterGT, `[{"list_items": {"filter": "alpha|beta|gamma"}}]`, false, false, "value_error:string"},
	})
}

func TestCheckTypesAndValues(t *testing.T) {
	const sp = "simple_python"
	out := func(args string) string { return `[{"f": {` + args + `}}]` }
	runCheckCases(t, []checkCase{
		{"all omitted", Python, sp, richFuncs, richGT, out(``), false, true, ""},
		{"int accepted for float", Python, sp, richFuncs, richGT, out(`"price": 5`), false, true, ""},
		{"float value", Python, sp, richFuncs, richGT, out(`"price": 5.0`), false, true, ""},
		{"wrong float", Python, sp, richFuncs, richGT, out(`"price": 5.5`), false, false, "value_error:others"},
		{"string for float", Python, sp, richFuncs, richGT, out(`"price": "5.0"`), false, false, "type_error:simple"},
		{"bool", Python, sp, richFuncs, richGT, out(`"flag": true`), false, true, ""},
		{"int for bool", Python, sp, richFuncs, richGT, out(`"flag": 1`), false, false, "type_error:simple"},
		{"date standardised", Python, sp, richFuncs, richGT, out(`"date": "April 1 2024"`), false, true, ""},
		{"list of strings standardised", Python, sp, richFuncs, richGT, out(`"tags": ["A", " b."]`), false, true, ""},
		{"list order matters", Python, sp, richFuncs, richGT, out(`"tags": ["b", "a"]`), false, false, "value_error:list/tuple"},
		// With "" acceptable the reference's nested item check always passes
		// (a non-list acceptable value keeps its flag true), so the value
		// check reports the mismatch.
		{"list item types with omittable param", Python, sp, richFuncs, richGT, out(`"tags": [1, 2]`), false, false, "value_error:list/tuple"},
		{"list item types (nested)", Python, sp, richFuncs, strictGT, out(`"tags": [1, 2]`), false, false, "type_error:nested"},
		{"list for string param", Python, sp, richFuncs, richGT, out(`"date": ["April 1, 2024"]`), false, false, "type_error:simple"},
		{"bool items are not ints", Python, sp, richFuncs, strictGT, out(`"nums": [true, 2]`), false, false, "type_error:nested"},
		{"int list", Python, sp, richFuncs, richGT, out(`"nums": [1, 2]`), false, true, ""},
		{"tuple as list", Python, sp, richFuncs, richGT, out(`"point": [1.5, 2.0]`), false, true, ""},
		{"tuple items int for float is a nested type error", Python, sp, richFuncs, strictGT, out(`"point": [1.5, 2]`), false, false, "type_error:nested"},
		{"nested items may match the ground truth item type", Python, sp, richFuncs, `[{"f": {"point": [[1, 2]]}}]`, out(`"point": [1, 2]`), false, true, ""},
		{"dict", Python, sp, richFuncs, richGT, out(`"opts": {"k": "V"}`), false, true, ""},
		{"dict optional key", Python, sp, richFuncs, richGT, out(`"opts": {"k": "v", "opt": 1}`), false, true, ""},
		{"dict wrong value", Python, sp, richFuncs, richGT, out(`"opts": {"k": "x"}`), false, false, "value_error:dict_value"},
		{"dict unknown key", Python, sp, richFuncs, richGT, out(`"opts": {"k": "v", "zz": 1}`), false, false, "value_error:dict_key"},
		{"dict missing key", Python, sp, richFuncs, richGT, out(`"opts": {"opt": 1}`), false, false, "value_error:dict_key"},
		{"list of dicts", Python, sp, richFuncs, richGT, out(`"rows": [{"a": 1}, {"a": 2}]`), false, true, ""},
		{"list of dicts count", Python, sp, richFuncs, richGT, out(`"rows": [{"a": 1}]`), false, false, "value_error:list_dict_count"},
		// The last acceptable value decides the error type: here "".
		{"list of dicts order with omittable param", Python, sp, richFuncs, richGT, out(`"rows": [{"a": 2}, {"a": 1}]`), false, false, "value_error:list_dict_count"},
		{"list of dicts order", Python, sp, richFuncs, strictGT, out(`"rows": [{"a": 2}, {"a": 1}]`), false, false, "value_error:dict_value"},
		{"variable name for integer", Python, sp, richFuncs, richGT, out(`"count": "n_items"`), false, true, ""},
		{"wrong variable name is compared exactly", Python, sp, richFuncs, richGT, out(`"count": "N_items"`), false, false, "value_error:others"},
		{"integer where ground truth is a variable", Python, sp, richFuncs, richGT, out(`"count": 3`), false, false, "value_error:others"},
		{"any is a string", Python, sp, richFuncs, richGT, out(`"anything": "X"`), false, true, ""},
		{"null value", Python, sp, richFuncs, richGT, out(`"anything": null`), false, false, "type_error:simple"},
	})
}

func TestCheckTuplesFromPythonSyntax(t *testing.T) {
	funcs, gt := funcsOf(t, richFuncs), answersOf(t, richGT)
	args := toolcall.NewObject(1)
	args.Set("point", Tuple{1.5, 2.0})
	if r := Check(Python, "simple_python", funcs, []Call{{Name: "f", Args: args}}, gt); !r.Valid {
		t.Errorf("tuple for tuple param: %+v", r)
	}
	args = toolcall.NewObject(1)
	args.Set("nums", Tuple{int64(1), int64(2)})
	if r := Check(Python, "simple_python", funcs, []Call{{Name: "f", Args: args}}, gt); r.Valid || r.ErrorType != "type_error:simple" {
		t.Errorf("tuple for array param: %+v", r)
	}
}

func TestCheckMultipleAndParallel(t *testing.T) {
	runCheckCases(t, []checkCase{
		{"multiple ground truth", Python, "multiple", chessFuncs, chessGT, `[{"board_game.chess.get_top_players": {"location": "New York", "minimum_rating": 2300}}]`, false, true, ""},
		{"TRBench multiple_177 reject", Python, "multiple", chessFuncs, chessGT, `[{"board_game.chess.get_top_players": {"location": "New York", "minimum_rating": 2301, "number_of_players": 10}}]`, false, false, "value_error:others"},
		{"multiple calls another function", Python, "live_multiple", chessFuncs, chessGT, `[{"lottery.get": {"n": 1}}]`, false, false, "simple_function_checker:wrong_func_name"},
		{"multiple count", Python, "multiple", chessFuncs, chessGT, `[]`, false, false, "multiple_function_checker:wrong_count"},
		{"parallel ground truth", Python, "parallel", spotifyFuncs, spotifyGT, `[{"spotify.play": {"artist": "Taylor Swift", "duration": 20}}, {"spotify.play": {"artist": "Maroon 5", "duration": 15}}]`, false, true, ""},
		{"parallel order free", Python, "live_parallel", spotifyFuncs, spotifyGT, `[{"spotify.play": {"artist": "Maroon 5", "duration": 15}}, {"spotify.play": {"artist": "Taylor Swift", "duration": 20}}]`, false, true, ""},
		{"TRBench parallel_0 reject: count", Python, "parallel", spotifyFuncs, spotifyGT, `[{"spotify_play": {"artist": "Taylor Swift", "duration": 20}}]`, false, false, "parallel_function_checker_no_order:wrong_count"},
		{"parallel one wrong", Python, "parallel", spotifyFuncs, spotifyGT, `[{"spotify.play": {"artist": "Taylor Swift", "duration": 20}}, {"spotify.play": {"artist": "Maroon 5", "duration": 16}}]`, false, false, "parallel_function_checker_no_order:cannot_find_match"},
		{"parallel_multiple", Python, "parallel_multiple", chessFuncs, `[{"lottery.get": {"n": [1]}}, {"board_game.chess.get_top_players": {"location": ["NY"], "minimum_rating": [1]}}]`,
			`[{"board_game.chess.get_top_players": {"location": "ny", "minimum_rating": 1}}, {"lottery.get": {"n": 1}}]`, false, true, ""},
		// Greedy, like the reference: the first expected call takes the
		// first output it accepts, even if a later one needed it.
		{"parallel greedy matching", Python, "parallel", spotifyFuncs, `[{"spotify.play": {"artist": ["A", "B"], "duration": [1]}}, {"spotify.play": {"artist": ["A"], "duration": [1]}}]`,
			`[{"spotify.play": {"artist": "A", "duration": 1}}, {"spotify.play": {"artist": "B", "duration": 1}}]`, false, false, "parallel_function_checker_no_order:cannot_find_match"},
	})
}

func TestCheckRelevance(t *testing.T) {
	one := []Call{{Name: "f", Args: toolcall.NewObject(0)}}
	for _, tc := range []struct {
		category string
		output   []Call
		valid    bool
		errType  string
	}{
		{"irrelevance", nil, true, ""},
		{"live_irrelevance", one, false, "irrelevance_error:decoder_success"},
		{"live_relevance", one, true, ""},
		{"live_relevance", nil, false, "relevance_error:decoder_failed"},
	} {
		r := Check(Python, tc.category, nil, tc.output, nil)
		if r.Valid != tc.valid || r.ErrorType != tc.errType {
			t.Errorf("%s with %d calls: %+v", tc.category, len(tc.output), r)
		}
	}
}

func TestCheckJava(t *testing.T) {
	funcs := `[{"name": "J.m", "parameters": {"type": "dict", "properties": {
		"flag": {"type": "boolean"}, "n": {"type": "integer"}, "big": {"type": "long"}, "ratio": {"type": "float"}, "d": {"type": "double"},
		"name": {"type": "String"}, "obj": {"type": "any"}, "list": {"type": "ArrayList", "items": {"type": "String"}},
		"arr": {"type": "Array", "items": {"type": "integer"}}, "sarr": {"type": "Array", "items": {"type": "String"}},
		"map": {"type": "HashMap"}, "set": {"type": "Set"}}, "required": []}}]`
	gt := `[{"J.m": {"flag": [true, ""], "n": [3, ""], "big": [42, ""], "ratio": [1.5, ""], "d": [0.5, ""], "name": ["DBeaver", ""],
		"obj": ["mapController", ""], "list": [["a", "b"], ""], "arr": [[2, 7], ""], "sarr": [["a", "b"], ""],
		"map": [{"limit": [50], "schemaFilter": ["public"]}, ""], "set": ["", "x"]}}]`
	out := func(args string) string { return `[{"J.m": {` + args + `}}]` }
	const sj = "simple_java"
	runCheckCases(t, []checkCase{
		{"boolean", Java, sj, funcs, gt, out(`"flag": "true"`), false, true, ""},
		{"boolean capitalised stays a string", Java, sj, funcs, gt, out(`"flag": "True"`), false, false, "type_error:simple"},
		{"non-string value", Java, sj, funcs, gt, out(`"flag": true`), false, false, "type_error:java"},
		{"integer", Java, sj, funcs, gt, out(`"n": "3"`), false, true, ""},
		{"integer trailing newline (Python $)", Java, sj, funcs, gt, out(`"n": "3\n"`), false, true, ""},
		{"integer wrong", Java, sj, funcs, gt, out(`"n": "4"`), false, false, "value_error:others"},
		{"long needs L", Java, sj, funcs, gt, out(`"big": "42L"`), false, true, ""},
		{"long without L", Java, sj, funcs, gt, out(`"big": "42"`), false, false, "type_error:simple"},
		{"float needs f", Java, sj, funcs, gt, out(`"ratio": "1.5f"`), false, true, ""},
		{"float without f", Java, sj, funcs, gt, out(`"ratio": "1.5"`), false, false, "type_error:simple"},
		{"double", Java, sj, funcs, gt, out(`"d": "0.5"`), false, true, ""},
		{"String", Java, sj, funcs, gt, out(`"name": "dbeaver"`), false, true, ""},
		{"any", Java, sj, funcs, gt, out(`"obj": "mapController"`), false, true, ""},
		{"ArrayList of String", Java, sj, funcs, gt, out(`"list": "new ArrayList<>(Arrays.asList(\"a\", \"b\"))"`), false, true, ""},
		{"Array of int", Java, sj, funcs, gt, out(`"arr": "new int[]{2, 7}"`), false, true, ""},
		{"Array of String keeps quotes (reference quirk)", Java, sj, funcs, gt, out(`"sarr": "new String[]{\"a\", \"b\"}"`), false, false, "value_error:list/tuple"},
		{"HashMap", Java, sj, funcs, gt, out(`"map": "new HashMap<String, Object>() {{ put(\"limit\", 50); put(\"schemaFilter\", \"public\"); }}"`), false, true, ""},
		{"HashMap wrong value", Java, sj, funcs, gt, out(`"map": "new HashMap<String, Object>() {{ put(\"limit\", \"50\"); put(\"schemaFilter\", \"public\"); }}"`), false, false, "value_error:dict_value"},
		{"Set is not implemented by the reference", Java, sj, funcs, gt, out(`"set": "x"`), false, false, "checker_error:NotImplementedError"},
	})
}

func TestCheckJavaScript(t *testing.T) {
	funcs := `[{"name": "js", "parameters": {"type": "dict", "properties": {
		"s": {"type": "String"}, "n": {"type": "integer"}, "x": {"type": "float"}, "b": {"type": "Boolean"}, "big": {"type": "Bigint"},
		"arr": {"type": "array", "items": {"type": "String"}}, "d": {"type": "dict"}, "any": {"type": "any"}}, "required": []}}]`
	gt := `[{"js": {"s": ["userInputField", ""], "n": [3, ""], "x": [4.0, ""], "b": [true, ""], "big": [12, ""], "arr": [["a", "b"], ""],
		"d": [{"k": ["v"], "n": [1], "l": [[1, 2]]}, ""], "any": ["listElement", ""]}}]`
	out := func(args string) string { return `[{"js": {` + args + `}}]` }
	const sjs = "simple_javascript"
	runCheckCases(t, []checkCase{
		{"String raw", JavaScript, sjs, funcs, gt, out(`"s": "userInputField"`), false, true, ""},
		{"String quoted", JavaScript, sjs, funcs, gt, out(`"s": "'userInputField'"`), false, true, ""},
		{"non-string", JavaScript, sjs, funcs, gt, out(`"n": 3`), false, false, "type_error:js"},
		{"integer", JavaScript, sjs, funcs, gt, out(`"n": "3"`), false, true, ""},
		{"float", JavaScript, sjs, funcs, gt, out(`"x": "4"`), false, true, ""},
		{"float exponent stays a string", JavaScript, sjs, funcs, gt, out(`"x": "4e0"`), false, false, "type_error:simple"},
		{"Boolean", JavaScript, sjs, funcs, gt, out(`"b": "true"`), false, true, ""},
		{"Bigint", JavaScript, sjs, funcs, gt, out(`"big": "12n"`), false, true, ""},
		{"array", JavaScript, sjs, funcs, gt, out(`"arr": "[\"a\", 'b']"`), false, true, ""},
		{"array wrong", JavaScript, sjs, funcs, gt, out(`"arr": "[\"a\"]"`), false, false, "value_error:list/tuple"},
		{"dict", JavaScript, sjs, funcs, gt, out(`"d": "{\"k\": \"v\", n: 1, 'l': [1, 2]}"`), false, true, ""},
		{"dict unknown key", JavaScript, sjs, funcs, gt, out(`"d": "{k: v, n: 1, l: [1, 2], z: 0}"`), false, false, "value_error:dict_key"},
		{"any", JavaScript, sjs, funcs, gt, out(`"any": "listElement"`), false, true, ""},
	})
}

func TestCheckerErrorsForReferenceExceptions(t *testing.T) {
	funcs := `[{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "number"}, "l": {"type": "array"}}, "required": []}}]`
	gt := `[{"f": {"a": [1], "l": [[1]]}}]`
	runCheckCases(t, []checkCase{
		{"unknown python type", Python, "simple_python", funcs, gt, `[{"f": {"a": 1}}]`, false, false, "checker_error:KeyError"},
		{"array without items", Python, "simple_python", funcs, gt, `[{"f": {"l": [1]}}]`, false, false, "checker_error:KeyError"},
		{"expected function missing from the list", Python, "multiple", funcs, `[{"g": {}}]`, `[{"f": {}}]`, false, false, "checker_error:TypeError"},
	})
}

func TestStandardize(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"April 1, 2024", "april12024"},
		{"April 1 2024", "april12024"},
		{"a-b_c.d/e*f^g h,i", "abcdefghi"},
		{"It's", `it"s`},
		{"ÉCOLE", "école"},
		{"", ""},
	} {
		if got := Standardize(tt.in); got != tt.want {
			t.Errorf("Standardize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyEqual(t *testing.T) {
	for _, tt := range []struct {
		a, b any
		want bool
	}{
		{int64(5), 5.0, true}, {true, int64(1), true}, {false, 0.0, true}, {int64(5), "5", false},
		{[]any{int64(1)}, Tuple{int64(1)}, false}, {[]any{true}, []any{int64(1)}, true},
		{nil, nil, true}, {nil, "", false}, {int64(1<<53 + 1), float64(1 << 53), false},
	} {
		if got := pyEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("pyEqual(%#v, %#v) = %v", tt.a, tt.b, got)
		}
	}
}

// The expectations below are the outputs of the reference's Python
// regular expressions and converters on the same inputs.
func TestJSFindPairs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want [][2]string
	}{
		{`'a': 1, 'b': [1, 2], c: x`, [][2]string{{"'a'", "1"}, {"'b'", "[1, 2]"}, {"c", "x"}}},
		{`key: a, b: c:d, e`, [][2]string{{"key", "a"}, {"b", "c:d, e"}}},
		{`a:1,b:2`, [][2]string{{"a", "1"}, {"b", "2"}}},
		{`x: "1,2", y: 3`, [][2]string{{"x", `"1,2"`}, {"y", "3"}}},
		{` : 5, k: v`, [][2]string{{" ", "5"}, {"k", "v"}}},
		{`url: http://x.com, n: 1`, [][2]string{{"url", "http://x.com"}, {"n", "1"}}},
	} {
		got := jsFindPairs(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("jsFindPairs(%q) = %q, want %q", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("jsFindPairs(%q) = %q, want %q", tt.in, got, tt.want)
				break
			}
		}
	}
}

func TestConverters(t *testing.T) {
	enc := func(v any) string { b, _ := toolcall.EncodeJSON(nil, v); return string(b) }
	for _, tt := range []struct {
		lang            Language
		in, typ, nested string
		want            string
	}{
		{JavaScript, `{"k": "v", "n": 1, "l": [1, 2]}`, "dict", "", `{"k": "v", "n": 1, "l": [1, 2]}`},
		{JavaScript, `["a", "b"]`, "array", "String", `["a", "b"]`},
		{JavaScript, `[[1, 2], [3]]`, "array", "array", `[[1, 2], [3]]`},
		{JavaScript, `new Array(1, 2)`, "array", "integer", `[1, 2]`},
		{JavaScript, `[1n, 2]`, "array", "Bigint", `[1, "2"]`},
		{JavaScript, `{}`, "dict", "", `{}`},
		{JavaScript, `{a: {b: 1}}`, "dict", "", `{"a": "{b: 1"}`},
		{Java, `new String[]{"a", "b"}`, "Array", "String", `["\"a\"", "\"b\""]`},
		{Java, `new int[]{1, 2}`, "Array", "integer", `[1, 2]`},
		{Java, `new ArrayList<>(Arrays.asList("a", "b"))`, "ArrayList", "String", `["a", "b"]`},
		{Java, `new ArrayList<Integer>() {{ add(1); add(2); }}`, "ArrayList", "integer", `[1, 2]`},
		{Java, `new HashMap<String, Object>() {{ put("k", 1); put("s", "v"); put("f", 1.5f); }}`, "HashMap", "", `{"k": 1, "s": "v", "f": 1.5}`},
		{Java, "12\n", "integer", "", `12`},
		{Java, `1.5f`, "float", "", `1.5`},
		{Java, `5L`, "long", "", `5`},
		{Java, `x`, "char", "", `"x"`},
	} {
		if got := enc(convert(tt.lang, tt.in, tt.typ, tt.nested)); got != tt.want {
			t.Errorf("%s convert(%q, %s, %s) = %s, want %s", tt.lang, tt.in, tt.typ, tt.nested, got, tt.want)
		}
	}
}

// exportUnitCases appends the table's cases, in the `benchline score
// bfcl-ast` input format plus the expected verdict, to the file named by
// BFCL_EXPORT_UNIT_CASES. It was used to confirm every expectation in these
// tables against the reference checker (see testdata/README.md).
func exportUnitCases(t *testing.T, cases []checkCase) {
	path := os.Getenv("BFCL_EXPORT_UNIT_CASES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range cases {
		lang := tc.lang
		if lang == "" {
			lang = Python
		}
		o := toolcall.NewObject(10)
		o.Set("id", t.Name()+"/"+tc.name)
		o.Set("corruption", "unit")
		o.Set("category", tc.category)
		o.Set("language", string(lang))
		o.Set("functions", decode(t, tc.funcs))
		o.Set("model_output", decode(t, tc.output))
		o.Set("possible_answer", decode(t, tc.gt))
		o.Set("underscore_to_dot", tc.u2d)
		o.Set("want_valid", tc.wantValid)
		o.Set("want_error_type", tc.wantType)
		b, err := toolcall.EncodeJSON(nil, o)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(append(b, '\n'))
	}
}

// TestFuncName covers the underscore_to_dot name a model must call: the
// one FunctionsFromValue computes, one built by hand, and one renamed after
// decoding (the precomputed name must not go stale).
func TestFuncName(t *testing.T) {
	decoded := funcsOf(t, factorialFuncs)[0] // math.factorial
	renamed := decoded
	renamed.Name = "stats.mean.v2"
	tests := []struct {
		name string
		fn   Function
		u2d  bool
		want string
	}{
		{"decoded, flag off", decoded, false, "math.factorial"},
		{"decoded, flag on", decoded, true, "math_factorial"},
		{"by hand, flag on", Function{Name: "a.b.c"}, true, "a_b_c"},
		{"by hand, no dot", Function{Name: "plain"}, true, "plain"},
		{"by hand, empty", Function{}, true, ""},
		{"renamed after decoding", renamed, true, "stats_mean_v2"},
		{"renamed, flag off", renamed, false, "stats.mean.v2"},
	}
	for _, tc := range tests {
		if got := (Checker{UnderscoreToDot: tc.u2d}).funcName(&tc.fn); got != tc.want {
			t.Errorf("%s: funcName = %q, want %q", tc.name, got, tc.want)
		}
	}
}
