// Package baselinetest runs the baseline model server for tests: an
// httptest server answering as internal/baseline does, and a fresh model
// gateway whose baseline provider points at it, as a worker process has.
package baselinetest

import (
	"net/http/httptest"
	"testing"

	"github.com/benchline/benchline/internal/baseline"
	"github.com/benchline/benchline/internal/gateway"
)

// Serve starts a baseline server with opts for the duration of the test
// and returns it with a gateway (empty in-process cache: a new worker
// process) for the baseline provider at it.
func Serve(t testing.TB, opts baseline.Options) (*baseline.Server, *gateway.Gateway) {
	t.Helper()
	srv, err := baseline.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, Gateway(t, hs.URL+"/v1")
}

// Gateway is a fresh gateway for the baseline provider at url.
func Gateway(t testing.TB, url string) *gateway.Gateway {
	t.Helper()
	cfg, err := gateway.LoadConfig(nil, gateway.WithBaselineURL(url, nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
