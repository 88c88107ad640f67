package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/benchline/benchline/internal/blob"
	"github.com/benchline/benchline/internal/blob/blobtest"
	"github.com/benchline/benchline/internal/blob/s3blob"
	"github.com/benchline/benchline/internal/devstack"
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
