# benchline: the two commands a new user needs are `make demo` and `make test`.
# Both run `make setup` first, which installs or builds every pinned tool into
# $(BENCHLINE_CACHE) (default ~/.cache/benchline) once.

GO        ?= go
export BENCHLINE_CACHE ?= $(HOME)/.cache/benchline
BIN       := bin/benchline
# What `benchline version` prints (internal/buildinfo), as the Dockerfile's VERSION build argument does.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/benchline/benchline/internal/buildinfo.Version=$(VERSION) \
             -X github.com/benchline/benchline/internal/buildinfo.Commit=$(shell git rev-parse HEAD 2>/dev/null) \
             -X github.com/benchline/benchline/internal/buildinfo.Date=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)
STATICCHECK := $(BENCHLINE_CACHE)/bin/staticcheck
# Integration tests start real servers and a worker binary: give them time.
TEST_FLAGS ?= -count=1 -timeout 40m

.PHONY: all setup setup-demo build build-bench demo dev test unit integration lint vet bench clean fuzz fuzz-short test-faults test-deploy test-deploy-short validate-deploy test-containers

all: build

setup:
	@bash deploy/dev/setup.sh

## setup-demo: what the demo needs only (no chromium, staticcheck or helm: those are for the tests).
setup-demo:
	@bash deploy/dev/setup.sh demo

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/benchline

## build-bench: the tool build of the binary, with `benchline bench` (docs/PERFORMANCE.md), which
## runs go test -bench in this checkout; the product binary (make build) has no bench command.
build-bench:
	$(GO) build -tags bench -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/benchline

## demo: set up, then start the embedded stack (state kept in $(BENCHLINE_CACHE)/demo), build the datasets,
## evaluate the baselines, refresh the demo board twice and print where to open it. A second run reuses everything.
demo: setup-demo build
	./$(BIN) demo

## dev: run the embedded stack until Ctrl-C.
dev: setup build
	./$(BIN) dev

## test: set up, then vet, staticcheck, unit tests and integration tests against the real stack
## (the bad-input corpus and the short fault suite among them), the short deployment test on a
## Temporal server with PostgreSQL (after the rest, so that it does not share the cores with the
## integration tests), then every fuzz target briefly; the bench command's tests run in the tool build (-tags bench).
test: setup vet lint
	$(GO) test $(TEST_FLAGS) ./...
	$(GO) test $(TEST_FLAGS) -tags bench -run 'Bench|JSONOutputs' ./cmd/benchline/
	$(MAKE) test-deploy-short
	$(MAKE) fuzz-short

## fuzz: every fuzz target (found by deploy/dev/fuzz.sh) for FUZZTIME each; crashers land in testdata/fuzz/.
FUZZTIME ?= 30s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash deploy/dev/fuzz.sh

## fuzz-short: every fuzz target for 3s from its seeds (a fresh corpus), as `make test` runs them.
fuzz-short:
	GO=$(GO) FUZZTIME=3s FUZZCACHE=none bash deploy/dev/fuzz.sh

## test-faults: the long fault suite on the real stack (worker kills, Temporal and MinIO restarts,
## model errors and latency); `make test` runs its short form.
test-faults: setup
	BENCHLINE_FAULTS=long $(GO) test $(TEST_FLAGS) -v -run 'TestFaultSuite' ./internal/integration/

## test-deploy: the process-level deployment test (docs/DEPLOY.md, "The real engine, here"): a Temporal
## server built from go.temporal.io/server on PostgreSQL, MinIO, and two workers per queue configured from
## the chart's rendering, with workers SIGKILLed and Temporal restarted mid-run: the long form
## (24,000 samples, four faults). test-deploy-short is the short form `make test` runs (6,000, two).
test-deploy: setup
	BENCHLINE_DEPLOY=long bash deploy/realstack/run.sh

test-deploy-short: setup
	BENCHLINE_DEPLOY=short bash deploy/realstack/run.sh

## test-containers: both images built with podman (base images made locally with mmdebstrap: no
## registry is reachable here), the sandbox suite inside the sandbox image, the deployment test with
## every benchline process a container (a worker container of each queue SIGKILLed, every demo
## benchmark evaluated) and the compose file up, an eval, down (deploy/containers, docs/DEPLOY.md
## "Containers, here"). Not part of `make test`: a cold set-up and build take about 25 minutes here.
test-containers: setup
	bash deploy/containers/run.sh

## validate-deploy: render the Helm chart (default and ci/ values), decode every object strictly into
## the Kubernetes API types, load the compose file with compose-go, check the Dockerfile and the
## Grafana dashboard (docs/DEPLOY.md). `make test` runs the same tests through `go test ./...`.
validate-deploy: setup
	$(GO) test -count=1 -v ./deploy/

unit:
	$(GO) test -short $(TEST_FLAGS) ./...

integration: setup
	$(GO) test $(TEST_FLAGS) ./internal/integration/...

# vet and lint also read the tag-gated deployment test (deploy/realstack) and the
# tool build's bench command (cmd/benchline, -tags bench).
vet:
	$(GO) vet -tags deploytest,bench ./...

lint: setup
	$(STATICCHECK) -tags deploytest,bench ./...

## bench: the Go micro-benchmarks quoted in docs/PERFORMANCE.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/pq/ ./scorers/... ./internal/gateway/... ./activities/

clean:
	rm -rf bin
