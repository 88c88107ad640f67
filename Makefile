# benchline: the two commands a new user needs are `make demo` and `make test`.
# Both run `make setup` first, which installs or builds every pinned tool into
# $(BENCHLINE_CACHE) (default ~/.cache/benchline) once.

GO        ?= go
export BENCHLINE_CACHE ?= $(HOME)/.cache/benchline
BIN       := bin/benchline
STATICCHECK := $(BENCHLINE_CACHE)/bin/staticcheck
# Integration tests start real servers and a worker binary: give them time.
TEST_FLAGS ?= -count=1 -timeout 40m

.PHONY: all setup build demo dev test unit integration lint vet bench clean fuzz fuzz-short test-faults

all: build

setup:
	@bash deploy/dev/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/benchline

## demo: set up, then start the embedded stack, build the datasets, evaluate the baselines and print the results.
demo: setup build
	./$(BIN) demo

## dev: run the embedded stack until Ctrl-C.
dev: setup build
	./$(BIN) dev

## test: set up, then vet, staticcheck, unit tests and integration tests against the real stack
## (the bad-input corpus and the short fault suite among them), then every fuzz target briefly.
test: setup vet lint
	$(GO) test $(TEST_FLAGS) ./...
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

unit:
	$(GO) test -short $(TEST_FLAGS) ./...

integration: setup
	$(GO) test $(TEST_FLAGS) ./internal/integration/...

vet:
	$(GO) vet ./...

lint: setup
	$(STATICCHECK) ./...

## bench: the Go micro-benchmarks quoted in docs/PERFORMANCE.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/pq/ ./scorers/... ./internal/gateway/...

clean:
	rm -rf bin
