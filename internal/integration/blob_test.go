package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/devstack"
	"github.com/benchline/benchline/internal/secret"
)

var prefixSeq atomic.Int64

// freshPrefix gives each subtest its own key space in the shared bucket.
func freshStore(t *testing.T, cfg s3blob.Config) blob.Store {
	cfg.Prefix = fmt.Sprintf("conformance/%s/%d", t.Name(), prefixSeq.Add(1))
	cfg.PartSize = 5 << 20 // the S3 minimum, so the large-object case uploads several parts
	s, err := s3blob.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBlobConformanceMinIO(t *testing.T) {
	blobtest.Conformance(t, func(t *testing.T) blob.Store { return freshStore(t, stack.Stack.Config.S3) })
}

func TestBlobConformanceMoto(t *testing.T) {
	if _, err := devstack.FindTool("moto_server"); err != nil {
		t.Skipf("moto_server not installed (it ships in this machine image's Python; MinIO is the required backend): %v", err)
	}
	st, err := devstack.Start(context.Background(), devstack.Options{Dir: t.TempDir(), S3: devstack.Moto, S3Only: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Stop()
	blobtest.Conformance(t, func(t *testing.T) blob.Store { return freshStore(t, st.Config.S3) })
}

// TestS3ErrorsAndUploadsMinIO (issue 23): on the real MinIO, an unfinished
// multipart upload below a prefix is aborted by AbortUploads (and one
// elsewhere is not); a wrong secret is blob.ErrDenied and a missing bucket
// blob.ErrNoBucket (not ErrNotFound), both permanent, both naming the
// endpoint.
func TestS3ErrorsAndUploadsMinIO(t *testing.T) {
	ctx := context.Background()
	cfg := stack.Stack.Config.S3
	st := freshStore(t, cfg).(*s3blob.Store)
	cfg.Prefix = ""
	for _, k := range []string{"a/unfinished", "b/other"} {
		full := fmt.Sprintf("conformance/%s/%d/%s", t.Name(), prefixSeq.Load(), k)
		if _, err := st.Client().CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(cfg.Bucket), Key: aws.String(full)}); err != nil {
			t.Fatal(err)
		}
	}
	// MinIO lists the uploads of one key, not of a prefix: the build
	// aborts those of each key it tried to stage.
	n, err := st.AbortUploads(ctx, "a/unfinished")
	if err != nil || n != 1 {
		t.Fatalf("AbortUploads(a/unfinished) = %d, %v; want 1", n, err)
	}
	if n, err := st.AbortUploads(ctx, "a/unfinished"); err != nil || n != 0 {
		t.Errorf("AbortUploads(a/unfinished) again = %d, %v; want 0", n, err)
	}
	if n, err := st.AbortUploads(ctx, "b/other"); err != nil || n != 1 {
		t.Errorf("AbortUploads(b/other) = %d, %v; want 1 (it was left alone)", n, err)
	}

	wrong := cfg
	wrong.SecretAccessKey = secret.New("not-the-secret")
	ws, err := s3blob.New(ctx, wrong)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.List(ctx, "datasets/")
	if !errors.Is(err, blob.ErrDenied) || !blob.Permanent(err) || !strings.Contains(err.Error(), cfg.Endpoint) {
		t.Errorf("a wrong secret: %v, want blob.ErrDenied naming %s", err, cfg.Endpoint)
	}
	nob := cfg
	nob.Bucket = "no-such-bucket-23"
	ns, err := s3blob.New(ctx, nob)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ns.Get(ctx, "datasets/bfcl/latest")
	if !errors.Is(err, blob.ErrNoBucket) || errors.Is(err, blob.ErrNotFound) || !strings.Contains(err.Error(), "no-such-bucket-23") {
		t.Errorf("a missing bucket: %v, want blob.ErrNoBucket naming it", err)
	}
}
