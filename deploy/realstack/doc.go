// Package realstack holds the process-level deployment test (`make
// test-deploy`, docs/DEPLOY.md "The real engine, here"): a Temporal server
// built from go.temporal.io/server on PostgreSQL, MinIO, the baseline model
// server and two worker processes per queue, all configured from the Helm
// chart's own rendering, with workers SIGKILLed and the Temporal server
// restarted while a board refresh and an evaluation run.
//
// The test is behind the build tag deploytest: it is not part of `go test
// ./...` or `make test` yet.
package realstack
