package s3blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/secret"
)

// TestClassifyCode maps each S3 error code and HTTP status to its class:
// a blob sentinel for failures no retry can fix (and for a missing key),
// nil for those that may pass.
func TestClassifyCode(t *testing.T) {
	tests := []struct {
		status int
		code   string
		want   error
	}{
		{404, "NoSuchBucket", blob.ErrNoBucket},
		{404, "NoSuchKey", blob.ErrNotFound},
		{404, "NotFound", blob.ErrNotFound},
		{404, "", blob.ErrNotFound},
		{404, "NoSuchUpload", blob.ErrNotFound},
		{403, "AccessDenied", blob.ErrDenied},
		{403, "SignatureDoesNotMatch", blob.ErrDenied},
		{403, "InvalidAccessKeyId", blob.ErrDenied},
		{400, "ExpiredToken", blob.ErrDenied},
		{400, "AuthorizationHeaderMalformed", blob.ErrDenied},
		{403, "RequestTimeTooSkewed", blob.ErrDenied},
		{403, "", blob.ErrDenied},
		{401, "", blob.ErrDenied},
		{400, "InvalidBucketName", blob.ErrInvalid},
		{400, "KeyTooLongError", blob.ErrInvalid},
		{400, "XMinioInvalidObjectName", blob.ErrInvalid},
		{400, "InvalidArgument", blob.ErrInvalid},
		{400, "", blob.ErrInvalid},
		{503, "SlowDown", nil},
		{500, "InternalError", nil},
		{503, "ServiceUnavailable", nil},
		{400, "RequestTimeout", nil},
		{500, "", nil},
		{502, "", nil},
		{0, "", nil},
		{507, "XMinioStorageFull", blob.ErrFull},
		{400, "XMinioAdminBucketQuotaExceeded", blob.ErrFull},
		{403, "QuotaExceeded", blob.ErrFull},
		{507, "", blob.ErrFull},
		{412, "PreconditionFailed", nil},
		{409, "ConditionalRequestConflict", nil},
	}
	for _, tt := range tests {
		got := classifyCode(tt.status, tt.code)
		if got != tt.want {
			t.Errorf("classifyCode(%d, %q) = %v, want %v", tt.status, tt.code, got, tt.want)
		}
		if perm := blob.Permanent(got); perm != (tt.want != nil && tt.want != blob.ErrNotFound) {
			t.Errorf("Permanent(classifyCode(%d, %q)) = %v", tt.status, tt.code, perm)
		}
	}
}

// TestSilentEndpoint: a server that accepts connections and never answers
// fails every operation within MaxAttempts response deadlines, and the
// error names the endpoint.
func TestSilentEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // hold it open, say nothing
		}
	}()
	endpoint := "http://" + ln.Addr().String()
	st, err := New(context.Background(), Config{Endpoint: endpoint, Bucket: "b", PathStyle: true, Region: "us-east-1",
		AccessKeyID: "k", SecretAccessKey: secret.New("s"), ResponseTimeout: 300 * time.Millisecond, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"list", func() error { _, err := st.List(ctx, "datasets/"); return err }},
		{"get", func() error { _, err := st.Get(ctx, "k"); return err }},
		{"head", func() error { _, err := st.Head(ctx, "k"); return err }},
		{"put", func() error { return blob.PutBytes(ctx, st, "k", []byte("x")) }},
	} {
		start := time.Now()
		err := op.do()
		took := time.Since(start)
		switch {
		case err == nil:
			t.Errorf("%s on a silent server: no error", op.name)
		case took > 5*time.Second:
			t.Errorf("%s took %v (want about 2×300ms plus back-off): %v", op.name, took, err)
		case !strings.Contains(err.Error(), endpoint):
			t.Errorf("%s: error does not name the endpoint %s: %v", op.name, endpoint, err)
		case errors.Is(err, blob.ErrNotFound) || blob.Permanent(err):
			t.Errorf("%s: a silent server is not a permanent failure: %v", op.name, err)
		}
	}
}

// TestPayloadSigned: a body's SHA-256 is signed only when it crosses a
// network unencrypted, or when the configuration asks for it.
func TestPayloadSigned(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, false}, // AWS: https
		{Config{Endpoint: "https://s3.example.com"}, false},
		{Config{Endpoint: "http://127.0.0.1:9000"}, false},
		{Config{Endpoint: "http://127.9.9.9:9000"}, false},
		{Config{Endpoint: "http://[::1]:9000"}, false},
		{Config{Endpoint: "http://localhost:9000"}, false},
		{Config{Endpoint: "http://minio:9000"}, true},
		{Config{Endpoint: "http://10.0.0.5:9000"}, true},
		{Config{Endpoint: "http://127.0.0.1.example.com:9000"}, true},
		{Config{Endpoint: "https://s3.example.com", SignPayload: true}, true},
		{Config{Endpoint: "http://127.0.0.1:9000", SignPayload: true}, true},
	} {
		if got := payloadSigned(tc.cfg); got != tc.want {
			t.Errorf("payloadSigned(%+v) = %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

// TestPayloadHeader: what payloadSigned decides is what a PUT sends, in
// the header the server checks the body against.
func TestPayloadHeader(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Amz-Content-Sha256"))
		io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	sum := sha256.Sum256([]byte("body"))
	for _, tc := range []struct {
		sign bool
		want string
	}{{false, "UNSIGNED-PAYLOAD"}, {true, hex.EncodeToString(sum[:])}} {
		got = nil
		st, err := New(context.Background(), Config{Endpoint: srv.URL, Bucket: "b", PathStyle: true, Region: "us-east-1",
			AccessKeyID: "k", SecretAccessKey: secret.New("s"), SignPayload: tc.sign})
		if err != nil {
			t.Fatal(err)
		}
		if err := blob.PutBytes(context.Background(), st, "k", []byte("body")); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("sign_payload %v: X-Amz-Content-Sha256 %q, want %q", tc.sign, got, tc.want)
		}
	}
}

// TestStoreFull: a server that answers every write with MinIO's 507
// XMinioStorageFull fails a Put, small (one PutObject) or large (a
// multipart upload), at its first request, not retried, with an error
// that is blob.ErrFull and names the key and the endpoint. A large Put's
// upload is aborted. (A 507 used to be a failure that may pass: the
// activities were retried 12 times over about 400 s, writing more.)
func TestStoreFull(t *testing.T) {
	var writes, aborts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodPost && q.Has("uploads"):
			w.Header().Set("Content-Type", "application/xml")
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>u1</UploadId></InitiateMultipartUploadResult>`)
		case r.Method == http.MethodDelete && q.Has("uploadId"):
			aborts.Add(1)
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodPut:
			writes.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInsufficientStorage)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>XMinioStorageFull</Code><Message>Storage backend has reached its minimum free drive threshold. Please delete a few objects to proceed.</Message></Error>`)
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	defer srv.Close()
	st, err := New(context.Background(), Config{Endpoint: srv.URL, Bucket: "b", PathStyle: true, Region: "us-east-1",
		AccessKeyID: "k", SecretAccessKey: secret.New("s"), PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name string
		size int64 // -1: unknown, a multipart upload
		body int
	}{{"small", 10, 10}, {"multipart", -1, 6 << 20}} {
		writes.Store(0)
		key := "datasets/d/v1/data/part-00003.parquet"
		err := st.Put(ctx, key, bytes.NewReader(make([]byte, tc.body)), tc.size)
		switch {
		case !errors.Is(err, blob.ErrFull) || !blob.Permanent(err):
			t.Errorf("%s: Put = %v, want blob.ErrFull", tc.name, err)
		case !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), srv.URL):
			t.Errorf("%s: Put = %v, want it to name %s and %s", tc.name, err, key, srv.URL)
		case writes.Load() > 2:
			// The multipart upload sends its two parts at once; neither is retried.
			t.Errorf("%s: %d writes, want each refused write sent once", tc.name, writes.Load())
		case tc.size == 10 && writes.Load() != 1:
			t.Errorf("%s: %d PutObject requests, want 1", tc.name, writes.Load())
		}
	}
	if aborts.Load() != 1 {
		t.Errorf("%d multipart uploads aborted, want 1", aborts.Load())
	}
}
