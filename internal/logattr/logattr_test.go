package logattr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/benchline/benchline/internal/logattr"
)

func TestHandlerAddsContextAttrs(t *testing.T) {
	tests := []struct {
		name  string
		ctx   func() context.Context
		group string
		want  map[string]any
	}{
		{"none", context.Background, "", map[string]any{}},
		{"shard", func() context.Context {
			return logattr.With(context.Background(), slog.String("run_id", "r1"), slog.Int("shard", 3))
		}, "", map[string]any{"run_id": "r1", "shard": float64(3)}},
		{"shard and sample", func() context.Context {
			ctx := logattr.With(context.Background(), slog.String("run_id", "r1"), slog.Int("shard", 3))
			return logattr.With(ctx, slog.String("sample", "s-7"))
		}, "", map[string]any{"run_id": "r1", "shard": float64(3), "sample": "s-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(logattr.Handler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
			log.InfoContext(tt.ctx(), "hello", "n", 1)
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("%v: %s", err, buf.Bytes())
			}
			if got["msg"] != "hello" || got["component"] != "test" || got["n"] != float64(1) {
				t.Errorf("record lost its own fields: %s", buf.Bytes())
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (%s)", k, got[k], v, buf.Bytes())
				}
			}
			for _, k := range []string{"run_id", "shard", "sample"} {
				if _, ok := tt.want[k]; !ok && got[k] != nil {
					t.Errorf("unexpected %s in %s", k, buf.Bytes())
				}
			}
		})
	}
}

func TestWithDoesNotShareSlices(t *testing.T) {
	base := logattr.With(context.Background(), slog.String("run_id", "r"))
	a := logattr.With(base, slog.String("sample", "a"))
	b := logattr.With(base, slog.String("sample", "b"))
	if got := logattr.From(a)[1].Value.String(); got != "a" {
		t.Errorf("a's sample = %q after b was made", got)
	}
	if got := logattr.From(b)[1].Value.String(); got != "b" {
		t.Errorf("b's sample = %q", got)
	}
	if n := len(logattr.From(base)); n != 1 {
		t.Errorf("base has %d attrs, want 1", n)
	}
}
