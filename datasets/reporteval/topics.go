package reporteval

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/benchline/benchline/datasets"
)

// A Topic is one row of the original's topics file
// (data/topic/high_quality_topics.jsonl).
type Topic struct {
	Category string `json:"category_str"`
	Topic    string `json:"topic"`
	// Line is the 1-based line of the file the topic was read from.
	Line int `json:"-"`
}

// FileID is the original's id of a report, the hex MD5 of its topic's
// UTF-8 bytes.
func FileID(topic string) string {
	sum := md5.Sum([]byte(topic))
	return hex.EncodeToString(sum[:])
}

// ReadTopics reads a topics file, one JSON object {"category_str",
// "topic"} a line, from r; name is the file's name for error messages.
// Blank lines are skipped (but counted in Line) and other fields ignored. A line that is not
// such an object, with an empty or missing field, or repeating an earlier
// topic (the two would share a FileID), is an error wrapping a
// *datasets.InputError that names the file and line; so is a line over
// MaxLineBytes.
func ReadTopics(r io.Reader, name string) ([]Topic, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	var topics []Topic
	firstLine := map[string]int{}
	lineNo := 0
	bad := func(msg string) error {
		return fmt.Errorf("reporteval: read topics: %w", &datasets.InputError{File: name, Line: lineNo, Msg: msg})
	}
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			return nil, bad("not valid UTF-8")
		}
		var raw struct {
			Category *string `json:"category_str"`
			Topic    *string `json:"topic"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			return nil, bad("not a JSON object {category_str, topic}: " + err.Error())
		}
		switch {
		case raw.Category == nil || *raw.Category == "":
			return nil, bad(`missing or empty string field "category_str"`)
		case raw.Topic == nil || *raw.Topic == "":
			return nil, bad(`missing or empty string field "topic"`)
		}
		if prev, dup := firstLine[*raw.Topic]; dup {
			return nil, bad(fmt.Sprintf("topic repeats line %d", prev))
		}
		firstLine[*raw.Topic] = lineNo
		topics = append(topics, Topic{Category: *raw.Category, Topic: *raw.Topic, Line: lineNo})
	}
	if err := sc.Err(); err != nil {
		lineNo++
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, bad(fmt.Sprintf("line longer than %d bytes", MaxLineBytes))
		}
		return nil, fmt.Errorf("reporteval: read topics: %s: line %d: %w", name, lineNo, err)
	}
	return topics, nil
}

// LoadTopicsFile reads the topics file at path (see ReadTopics).
func LoadTopicsFile(path string) ([]Topic, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reporteval: load topics: %w", err)
	}
	defer f.Close()
	return ReadTopics(f, path)
}
