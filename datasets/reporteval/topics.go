package reporteval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

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

// ReadTopics reads a topics file, one JSON object {"category_str",
// "topic"} a line, from r; name is the file's name for error messages.
// Blank lines are skipped (but counted in Line) and other fields ignored. A line that is not
// such an object, with an empty or missing field, or repeating an earlier
// topic (the two would share a FileID), is an error wrapping a
// *datasets.InputError that names the file and line. Lines are read by
// datasets.EachLine (invalid UTF-8 is an InputError too).
func ReadTopics(r io.Reader, name string) ([]Topic, error) {
	var topics []Topic
	firstLine := map[string]int{}
	err := datasets.EachLine(r, name, func(lineNo int, line []byte) error {
		bad := func(msg string) error { return &datasets.InputError{File: name, Line: lineNo, Msg: msg} }
		var raw struct {
			Category *string `json:"category_str"`
			Topic    *string `json:"topic"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			return bad("not a JSON object {category_str, topic}: " + err.Error())
		}
		switch {
		case raw.Category == nil || *raw.Category == "":
			return bad(`missing or empty string field "category_str"`)
		case raw.Topic == nil || *raw.Topic == "":
			return bad(`missing or empty string field "topic"`)
		}
		if prev, dup := firstLine[*raw.Topic]; dup {
			return bad(fmt.Sprintf("topic repeats line %d", prev))
		}
		firstLine[*raw.Topic] = lineNo
		topics = append(topics, Topic{Category: *raw.Category, Topic: *raw.Topic, Line: lineNo})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reporteval: read topics: %w", err)
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
