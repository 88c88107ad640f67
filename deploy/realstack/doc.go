// Package realstack holds the process-level deployment test (`make
// test-deploy`, docs/DEPLOY.md "The real engine, here"): a Temporal server
// built from go.temporal.io/server on PostgreSQL that requires mutual TLS,
// MinIO, the baseline model server and two worker processes per queue, all
// configured from the Helm chart's own rendering (its TLS Secret included),
// with workers SIGKILLed and the Temporal server restarted while a board
// refresh and an evaluation run, and clients without the right certificate
// refused.
//
// The test is behind the build tag deploytest, so that `go test ./...` does
// not run it beside the integration package: `make test` runs its short form
// afterwards (make test-deploy-short), `make test-deploy` its long form
// (BENCHLINE_DEPLOY=long).
package realstack
