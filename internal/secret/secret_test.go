package secret

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestValueNeverPrints(t *testing.T) {
	const key = "sk-sentinel-0123456789"
	s := New(key)
	if s.Reveal() != key {
		t.Fatalf("Reveal = %q", s.Reveal())
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "key", s)
	j, err := json.Marshal(struct{ K Value }{s})
	if err != nil {
		t.Fatal(err)
	}
	txt, _ := s.MarshalText()
	for name, out := range map[string]string{
		"%v": fmt.Sprintf("%v", s),
		//lint:ignore S1025 the %s verb itself is under test
		"%s":   fmt.Sprintf("%s", s),
		"%+v":  fmt.Sprintf("%+v", struct{ K Value }{s}),
		"%#v":  fmt.Sprintf("%#v", s),
		"%q":   fmt.Sprintf("%q", s),
		"json": string(j),
		"text": string(txt),
		"slog": logged.String(),
	} {
		if strings.Contains(out, key) || !strings.Contains(out, Redacted) {
			t.Errorf("%s: %q", name, out)
		}
	}
	if New("").IsZero() != true || s.IsZero() {
		t.Error("IsZero")
	}
}
