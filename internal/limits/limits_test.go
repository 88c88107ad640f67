package limits

import (
	"errors"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	if b, err := ReadFile(strings.NewReader("abcd"), "f", 4); err != nil || string(b) != "abcd" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	_, err := ReadFile(strings.NewReader("abcde"), "board.yaml", 4)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "board.yaml") {
		t.Errorf("over the limit: %v", err)
	}
}

func TestSetAndDefaults(t *testing.T) {
	defer Set(Limits{})
	if got := Get(); got.LineBytes != DefaultLineBytes || got.SourceFiles != DefaultSourceFiles || got.ReplyBytes != DefaultReplyBytes {
		t.Errorf("defaults: %+v", got)
	}
	Set(Limits{ReplyBytes: 4096})
	if got := Get(); got.ReplyBytes != 4096 || got.LineBytes != DefaultLineBytes {
		t.Errorf("after Set: %+v", got)
	}
}
