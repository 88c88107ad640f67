// Package secret holds credentials in a type that never prints them.
//
// Every credential benchline holds (model API keys, S3 secret keys, webhook
// keys, the Temporal API key, OIDC client secrets, cookie keys) is a Value
// from the moment it is read from configuration to the moment it is used:
// every way of printing one (fmt verbs, %#v, JSON, text, slog) yields
// [REDACTED], and only Reveal returns the credential.
package secret

import "log/slog"

// Redacted is what a Value prints as.
const Redacted = "[REDACTED]"

// Value holds a credential. The zero Value is the empty credential.
type Value struct{ v string }

// New wraps v.
func New(v string) Value { return Value{v: v} }

// Reveal returns the credential, for the place that sends it only.
func (s Value) Reveal() string { return s.v }

// IsZero reports whether the credential is empty.
func (s Value) IsZero() bool { return s.v == "" }

// String implements fmt.Stringer.
func (s Value) String() string { return Redacted }

// GoString implements fmt.GoStringer.
func (s Value) GoString() string { return Redacted }

// MarshalJSON implements json.Marshaler.
func (s Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText implements encoding.TextMarshaler (YAML, flags).
func (s Value) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue implements slog.LogValuer.
func (s Value) LogValue() slog.Value { return slog.StringValue(Redacted) }
