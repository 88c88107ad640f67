package ifevalcode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/benchline/benchline/internal/sandbox"
	"github.com/benchline/benchline/internal/sandbox/lang"
)

// maxLine bounds one input line.
const maxLine = 64 << 20

// Line is one input line of ScoreLines (the original's field names).
type Line struct {
	ID                  json.RawMessage `json:"id"`
	ProgrammingLanguage string          `json:"programming_language"`
	CheckCorrectness    *string         `json:"check_correctness"`
	CheckInstruction    *string         `json:"check_instruction"`
	Response            *string         `json:"response"`
}

// Output is one output line of ScoreLines.
type Output struct {
	ID          json.RawMessage `json:"id"`
	Correct     bool            `json:"correct"`
	Instruction bool            `json:"instruction"`
	Status      Status          `json:"status"`
	Detail      string          `json:"detail"`
}

// ScoreLines implements `benchline score ifevalcode`. It reads JSON lines
//
//	{"id", "programming_language", "check_correctness", "check_instruction", "response"}
//
// from r and writes one line {"id", "correct", "instruction", "status",
// "detail"} per non-blank input line to w, in input order, scoring up to
// Options.Concurrency responses at a time. id is echoed verbatim (a string
// or a number). A null or missing response scores as "" (the original's
// stand-in for a missing response).
//
// A response whose run hits a sandbox-error is retried (Options.Attempts in
// all); if it still fails, its line says status "sandbox-error". A
// malformed line (bad JSON, unknown language, missing check) gets
// status "failed" and detail "input error: ...". Scoring goes on in both
// cases, and once all lines are written ScoreLines returns an error that
// names those lines. Read and write failures stop at once.
func (s *Scorer) ScoreLines(ctx context.Context, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		line int
		raw  []byte
		out  chan lineResult
	}
	jobs := make(chan job)
	order := make(chan job, 2*s.opts.Concurrency)
	var wg sync.WaitGroup
	for range s.opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.out <- s.scoreLine(ctx, j.raw)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		br := bufio.NewReaderSize(r, 1<<16)
		for n := 1; ; n++ {
			raw, err := readLine(br)
			if len(bytes.TrimSpace(raw)) > 0 {
				j := job{line: n, raw: raw, out: make(chan lineResult, 1)}
				select {
				case order <- j:
				case <-ctx.Done():
					readErr <- ctx.Err()
					return
				}
				select {
				case jobs <- j:
				case <-ctx.Done():
					readErr <- ctx.Err()
					return
				}
			}
			if errors.Is(err, io.EOF) {
				readErr <- nil
				return
			}
			if err != nil {
				readErr <- fmt.Errorf("ifevalcode: read line %d: %w", n, err)
				return
			}
		}
	}()
	defer wg.Wait()

	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var inputBad, infraBad []int
	for j := range order {
		var res lineResult
		select {
		case res = <-j.out:
		case <-ctx.Done():
			return fmt.Errorf("ifevalcode: %w", ctx.Err())
		}
		if res.fatal != nil {
			cancel()
			return fmt.Errorf("ifevalcode: line %d: %w", j.line, res.fatal)
		}
		switch res.kind {
		case badInput:
			inputBad = append(inputBad, j.line)
		case badInfra:
			infraBad = append(infraBad, j.line)
		}
		if err := enc.Encode(res.out); err != nil {
			cancel()
			return fmt.Errorf("ifevalcode: write: %w", err)
		}
		// Flush per line so that a consumer sees results as they come.
		if err := bw.Flush(); err != nil {
			cancel()
			return fmt.Errorf("ifevalcode: write: %w", err)
		}
	}
	if err := <-readErr; err != nil {
		return err
	}
	var errs []error
	if len(inputBad) > 0 {
		errs = append(errs, fmt.Errorf("ifevalcode: %d malformed input line(s): %s", len(inputBad), lineList(inputBad)))
	}
	if len(infraBad) > 0 {
		errs = append(errs, fmt.Errorf("ifevalcode: %d line(s) not scored after %d attempts (sandbox-error): %s: %w",
			len(infraBad), s.opts.Attempts, lineList(infraBad), sandbox.ErrInfrastructure))
	}
	return errors.Join(errs...)
}

type lineKind int

const (
	scored lineKind = iota
	badInput
	badInfra
)

type lineResult struct {
	out   Output
	kind  lineKind
	fatal error // context canceled: stop
}

func (s *Scorer) scoreLine(ctx context.Context, raw []byte) lineResult {
	var in Line
	if err := json.Unmarshal(raw, &in); err != nil {
		return inputError(nil, "not a JSON object: "+err.Error())
	}
	id := in.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	switch {
	case lang.MainFile(lang.Language(in.ProgrammingLanguage)) == "":
		return inputError(id, fmt.Sprintf("unknown programming_language %q (want python, java, cpp, csharp, typescript, javascript, php or shell)", in.ProgrammingLanguage))
	case in.CheckCorrectness == nil:
		return inputError(id, `missing "check_correctness"`)
	case in.CheckInstruction == nil:
		return inputError(id, `missing "check_instruction"`)
	}
	response := ""
	if in.Response != nil {
		response = *in.Response
	}
	it := Item{ID: string(id), Language: lang.Language(in.ProgrammingLanguage),
		CheckCorrectness: *in.CheckCorrectness, CheckInstruction: *in.CheckInstruction}
	var res Result
	var err error
	for attempt := 1; attempt <= s.opts.Attempts; attempt++ {
		res, err = s.Score(ctx, it, response)
		if err == nil || !sandbox.IsInfrastructure(err) || ctx.Err() != nil {
			break
		}
		if attempt < s.opts.Attempts {
			select {
			case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return lineResult{fatal: ctx.Err()}
	case errors.Is(err, ErrCheckEscape):
		return inputError(id, err.Error())
	case err != nil && sandbox.IsInfrastructure(err):
		return lineResult{kind: badInfra, out: Output{ID: id, Status: StatusSandboxError, Detail: clip(err.Error())}}
	case err != nil:
		return inputError(id, err.Error())
	}
	return lineResult{out: Output{ID: id, Correct: res.Correct, Instruction: res.Instruction, Status: res.Status, Detail: res.Detail}}
}

func inputError(id json.RawMessage, msg string) lineResult {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return lineResult{kind: badInput, out: Output{ID: id, Status: StatusFailed, Detail: clip("input error: " + msg)}}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line (without its newline) of at most maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("%w (over %d bytes)", errLineTooLong, maxLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

func lineList(lines []int) string {
	const show = 20
	parts := make([]string, 0, min(len(lines), show))
	for i, l := range lines {
		if i == show {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(lines)-show))
			break
		}
		parts = append(parts, fmt.Sprint(l))
	}
	return strings.Join(parts, ", ")
}
