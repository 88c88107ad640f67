// Package blob is benchline's object-store layer: a small Store interface over
// S3-protocol servers (AWS S3, MinIO, moto, …) and the helpers built on it.
// The S3 backend is package s3blob, the in-memory fake package blobtest; this
// package links neither, so code that only uses a Store stays light.
//
// Keys are slash-separated paths relative to the store's prefix; a Store never
// sees the bucket or the prefix in a key. Every artifact benchline writes goes
// through a Store, so the same code runs against AWS and the embedded MinIO.
package blob

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned (wrapped) when a key does not exist.
var ErrNotFound = errors.New("blob: not found")

// ErrNoBucket is returned (wrapped) when the store's bucket does not exist.
var ErrNoBucket = errors.New("blob: the bucket does not exist")

// ErrDenied is returned (wrapped) when the server refuses the credentials
// (401, 403, a bad signature or key id) or there are none.
var ErrDenied = errors.New("blob: access denied (check the S3 credentials)")

// ErrInvalid is returned (wrapped) when the server calls a request
// malformed (a 400: an invalid key or bucket name, ...).
var ErrInvalid = errors.New("blob: request refused as invalid")

// ErrFull is returned (wrapped) when the server refuses a write because
// the store is full: out of space (MinIO's 507 XMinioStorageFull) or over
// a quota (MinIO's bucket quota, Ceph's QuotaExceeded). It lasts until
// someone frees space, so no retry within a workflow's minutes fixes it.
var ErrFull = errors.New("blob: the store is full (free space or raise its quota, then run the command again)")

// Permanent reports whether err is a failure no retry can fix: a missing
// bucket, refused credentials, an invalid request, a full store. (A
// missing key is not among them: callers decide what ErrNotFound means.)
func Permanent(err error) bool {
	return errors.Is(err, ErrNoBucket) || errors.Is(err, ErrDenied) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrFull)
}

// ErrExists is returned (wrapped) by PutIfAbsent when the key already exists.
var ErrExists = errors.New("blob: already exists")

// Info describes a stored object.
type Info struct {
	Key      string
	Size     int64
	ETag     string
	Modified time.Time
}

// Store is the object store every component uses.
//
// Put replaces the object at key with the contents of r; size may be -1 when
// unknown, in which case large bodies are uploaded in parts with bounded
// memory. PutIfAbsent writes only when nothing exists at key and otherwise
// returns an error wrapping ErrExists: it is how a first writer wins.
// Get returns a reader the caller must close. List returns every key below
// prefix in lexical order. Delete of a missing key is not an error.
type Store interface {
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Head(ctx context.Context, key string) (Info, error)
	List(ctx context.Context, prefix string) ([]Info, error)
	Delete(ctx context.Context, key string) error
}

// RangeGetter is an optional capability: a store that can read part of an
// object. Parquet readers use it to fetch footers and projected columns only.
type RangeGetter interface {
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error)
}

// UploadAborter is an optional capability: a store whose large Puts go up
// in parts can abort the unfinished uploads of keys starting with prefix
// (those of a worker killed mid-upload), so they stop taking space. It
// returns how many it aborted. (MinIO matches a whole key only, AWS S3
// any prefix: callers pass the keys they wrote.)
type UploadAborter interface {
	AbortUploads(ctx context.Context, prefix string) (int, error)
}

// AbortUploads aborts the unfinished uploads below prefix when s can
// (UploadAborter); other stores have none.
func AbortUploads(ctx context.Context, s Store, prefix string) (int, error) {
	if a, ok := s.(UploadAborter); ok {
		return a.AbortUploads(ctx, prefix)
	}
	return 0, nil
}
