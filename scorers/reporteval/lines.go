package reporteval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxLineBytes bounds one input line (a report with its id), so memory
// stays bounded on hostile input. Real reports are tens to hundreds of KB.
const MaxLineBytes = 64 << 20

// ErrMalformedInput is wrapped by the error ScoreSectionsLines returns
// when some input lines could not be read as {"id", "report"}.
var ErrMalformedInput = errors.New("reporteval: score sections: malformed input")

// sectionsIn is one input line of ScoreSectionsLines.
type sectionsIn struct {
	ID     json.RawMessage `json:"id"`
	Topic  *string         `json:"topic"`
	Report *string         `json:"report"`
}

// SectionsOut is one output line of ScoreSectionsLines.
type SectionsOut struct {
	ID       json.RawMessage `json:"id"`
	Skipped  bool            `json:"skipped"`
	Sections []string        `json:"sections"`
	// Error names what is wrong with a malformed input line; empty (and
	// left out) otherwise.
	Error string `json:"error,omitempty"`
}

// ScoreSectionsLines implements `benchline score reporteval-sections`. It
// reads JSON lines {"id", "report"} from r and writes one line
// {"id", "skipped", "sections"} per non-blank input line to w, in input
// order: skipped and sections are what Sections returns (sections is []
// when there are none). id is echoed verbatim, whatever its JSON type;
// when absent (the original's reports files have none) it is derived from
// the line's "topic" as the builder derives a row's id (FileID, the hex MD5
// of the topic), and null without a topic. Other fields are ignored. Lines may be up to
// MaxLineBytes long.
//
// A malformed line (not JSON, not an object, report missing, null or not a
// string, not UTF-8) does not stop the work: its output line has
// skipped=false, sections=[] and an "error" field naming the line and the
// fault, and once every line is written ScoreSectionsLines returns an error
// wrapping ErrMalformedInput that lists those line numbers. Blank lines are
// skipped (but counted in line numbers). Read and write failures, a line
// over MaxLineBytes and a cancelled ctx stop at once.
func ScoreSectionsLines(ctx context.Context, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var bad []int
	var firstErr error
	lineNo := 0
	for sc.Scan() {
		lineNo++
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reporteval: score sections: line %d: %w", lineNo, err)
		}
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		out, err := sectionsLine(line)
		if err != nil {
			err = fmt.Errorf("line %d: %w", lineNo, err)
			out.Error = err.Error()
			bad = append(bad, lineNo)
			if firstErr == nil {
				firstErr = err
			}
		}
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("reporteval: score sections: write result of line %d: %w", lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("reporteval: score sections: line %d: longer than %d bytes: %w", lineNo+1, MaxLineBytes, err)
		}
		return fmt.Errorf("reporteval: score sections: read line %d: %w", lineNo+1, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reporteval: score sections: write results: %w", err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %d line(s) %s (first: %v)", ErrMalformedInput, len(bad), lineList(bad), firstErr)
	}
	return nil
}

// sectionsLine splits the report of one input line. A non-nil error means
// the line is malformed; out then carries the id when one could be read.
func sectionsLine(line []byte) (SectionsOut, error) {
	out := SectionsOut{Sections: []string{}}
	if !utf8.Valid(line) {
		return out, errors.New("not valid UTF-8")
	}
	var in sectionsIn
	if err := json.Unmarshal(line, &in); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return out, fmt.Errorf("bad JSON: %w", err)
		}
		if te.Field == "" {
			return out, fmt.Errorf("not a JSON object but %s", te.Value)
		}
		// Only report has a type to break; the id is worth echoing.
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &idOnly) == nil {
			out.ID = idOnly.ID
		}
		return out, fmt.Errorf("field %q is %s, not a string", te.Field, te.Value)
	}
	out.ID = in.ID
	if (len(in.ID) == 0 || string(in.ID) == "null") && in.Topic != nil {
		// The original's reports files have no id: derive the builder's
		// (FileID of the topic), so lines join the dataset's rows.
		out.ID, _ = json.Marshal(FileID(*in.Topic))
	}
	if in.Report == nil {
		return out, errors.New(`missing string field "report"`)
	}
	skipped, secs := Sections(*in.Report)
	out.Skipped = skipped
	if secs != nil {
		out.Sections = secs
	}
	return out, nil
}

// lineList renders line numbers for an error message, the first 20 and a
// count of the rest.
func lineList(lines []int) string {
	const show = 20
	if len(lines) <= show {
		return fmt.Sprint(lines)
	}
	return fmt.Sprintf("%v and %d more", lines[:show], len(lines)-show)
}
