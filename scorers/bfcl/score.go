package bfcl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/benchline/benchline/internal/toolcall"
)

// maxLine bounds one input line, so memory stays bounded on hostile input.
const maxLine = 64 << 20

// ScoreLines implements `benchline score bfcl-ast`. Each input line is a
// JSON object:
//
//	{"id": ..., "category": "simple_python", "language": "python",
//	 "functions": [...], "model_output": [{"f": {"a": 1}}],
//	 "possible_answer": [{"f": {"a": [1]}}], "underscore_to_dot": false}
//
// model_output is BFCL's decoded model output (a list of {func_name:
// {arg: value}}; Java and JavaScript argument values are source strings);
// possible_answer is the item's ground_truth. language may be omitted (it is
// then derived from the category); underscore_to_dot is optional and
// defaults to false. possible_answer may be omitted for the relevance and
// irrelevance categories. A null or missing model_output stands for output
// that could not be decoded.
//
// ScoreLines reads such lines from r and writes one line
// {"id", "valid", "error_type"} per non-blank input line to w, in input
// order. error_type is the reference checker's string, "" when valid; for
// output that is not in BFCL's decoded format it is
// "ast_decoder:decoder_wrong_output_format" (or "ast_decoder:decoder_failed"
// when model_output is null or missing), as BFCL's eval runner reports.
//
// A malformed input line (bad JSON, missing fields, unknown language) does
// not stop scoring: it yields an output line with valid=false and
// error_type "input_error:<reason>", and once all input is processed
// ScoreLines returns an error naming the malformed line numbers. Blank
// lines are skipped. Read and write failures stop scoring at once.
func ScoreLines(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	var bad []int
	var firstErr error
	lineNo := 0
	buf := make([]byte, 0, 256)
	var lineBuf []byte
	for {
		line, err := readLine(br, lineBuf[:0])
		lineBuf = line
		if len(line) > 0 || err == nil {
			lineNo++
		}
		if errors.Is(err, errLineTooLong) {
			return fmt.Errorf("bfcl: line %d: longer than %d bytes", lineNo, maxLine)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("bfcl: read line %d: %w", lineNo, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			id, res, lineErr := scoreLine(line)
			if lineErr != nil {
				bad = append(bad, lineNo)
				if firstErr == nil {
					firstErr = fmt.Errorf("line %d: %w", lineNo, lineErr)
				}
			}
			buf = buf[:0]
			buf = append(buf, `{"id": `...)
			if buf, err = toolcall.EncodeJSON(buf, id); err != nil {
				buf = append(buf[:len(`{"id": `)], "null"...)
			}
			buf = append(buf, `, "valid": `...)
			if res.Valid {
				buf = append(buf, "true"...)
			} else {
				buf = append(buf, "false"...)
			}
			buf = append(buf, `, "error_type": `...)
			buf, _ = toolcall.EncodeJSON(buf, res.ErrorType)
			buf = append(buf, "}\n"...)
			if _, werr := bw.Write(buf); werr != nil {
				return fmt.Errorf("bfcl: write result of line %d: %w", lineNo, werr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("bfcl: write results: %w", err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("bfcl: %d malformed input line(s) %v (scored as input_error): %w", len(bad), bad, firstErr)
	}
	return nil
}

var errLineTooLong = errors.New("line too long")

// readLine appends the next line (with its newline) to line, reusing its
// storage.
func readLine(br *bufio.Reader, line []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// scoreLine scores one input line. A non-nil error means the line itself
// is malformed; res then carries an "input_error:" type.
func scoreLine(line []byte) (id any, res Result, err error) {
	// Function descriptions are long and never read: skip building them.
	v, err := toolcall.DecodeJSONDropping(line, "functions", "description")
	if err != nil {
		return nil, inputError("bad_json", err), err
	}
	obj, isObj := v.(*toolcall.Object)
	if !isObj {
		err = errors.New("line is not a JSON object")
		return nil, inputError("not_object", err), err
	}
	id, _ = obj.Get("id")
	catV, _ := obj.Get("category")
	category, isStr := catV.(string)
	if !isStr || category == "" {
		err = errors.New("missing string field category")
		return id, inputError("missing_category", err), err
	}
	lang := LanguageForCategory(category)
	if lv, present := obj.Get("language"); present && lv != nil {
		ls, isStr := lv.(string)
		if !isStr {
			err = errors.New("language is not a string")
			return id, inputError("bad_language", err), err
		}
		if ls != "" {
			if lang, err = ParseLanguage(ls); err != nil {
				return id, inputError("bad_language", err), err
			}
		}
	}
	var c Checker
	if u, present := obj.Get("underscore_to_dot"); present {
		b, isBool := u.(bool)
		if !isBool {
			err = errors.New("underscore_to_dot is not a boolean")
			return id, inputError("bad_underscore_to_dot", err), err
		}
		c.UnderscoreToDot = b
	}
	out, _ := obj.Get("model_output")
	kind := CategoryKind(category)
	if kind == KindRelevance || kind == KindIrrelevance {
		calls, isFC := CallsFromValue(out)
		if !isFC {
			calls = nil // not in call format: counts as no call
		}
		return id, c.Check(lang, category, nil, calls, nil), nil
	}
	fv, _ := obj.Get("functions")
	funcs, err := FunctionsFromValue(fv)
	if err != nil {
		return id, inputError("bad_functions", err), err
	}
	pv, _ := obj.Get("possible_answer")
	answers, err := AnswersFromValue(pv)
	if err != nil {
		return id, inputError("bad_possible_answer", err), err
	}
	if out == nil {
		return id, fail("ast_decoder:decoder_failed", "Invalid syntax. Failed to decode AST.", ""), nil
	}
	calls, isFC := CallsFromValue(out)
	if !isFC {
		return id, fail("ast_decoder:decoder_wrong_output_format", "Did not output in the specified format.", ""), nil
	}
	return id, c.Check(lang, category, funcs, calls, answers), nil
}

func inputError(kind string, err error) Result {
	return fail("input_error:"+kind, "malformed input line: %s", err.Error())
}
