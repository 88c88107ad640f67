// Package logattr carries log attributes in a context: the engine labels a
// shard's context with its run id and shard, and each sample's with its id,
// and every record logged with that context (slog's …Context methods)
// carries them, whoever logs it (the activities, the model gateway).
package logattr

import (
	"context"
	"log/slog"
)

type key struct{}

// With returns ctx carrying attrs after those it already carries.
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(key{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	all = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, key{}, all)
}

// From returns the attributes ctx carries.
func From(ctx context.Context) []slog.Attr {
	a, _ := ctx.Value(key{}).([]slog.Attr)
	return a
}

// Handler wraps h so that each record gets the attributes of the context
// it was logged with.
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if attrs := From(ctx); len(attrs) > 0 {
		r = r.Clone()
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.Handler.WithAttrs(attrs)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.Handler.WithGroup(name)} }
