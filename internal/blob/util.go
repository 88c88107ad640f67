package blob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// PutBytes stores b at key.
func PutBytes(ctx context.Context, s Store, key string, b []byte) error {
	return s.Put(ctx, key, bytes.NewReader(b), int64(len(b)))
}

// GetBytes reads the whole object at key.
func GetBytes(ctx context.Context, s Store, key string) ([]byte, error) {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("blob: read %s: %w", key, err)
	}
	return b, nil
}

// PutJSON stores v as indented JSON at key.
func PutJSON(ctx context.Context, s Store, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("blob: encode %s: %w", key, err)
	}
	return PutBytes(ctx, s, key, append(b, '\n'))
}

// GetJSON decodes the JSON object at key into v.
func GetJSON(ctx context.Context, s Store, key string, v any) error {
	b, err := GetBytes(ctx, s, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("blob: decode %s: %w", key, err)
	}
	return nil
}

// Exists reports whether key exists.
func Exists(ctx context.Context, s Store, key string) (bool, error) {
	_, err := s.Head(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
