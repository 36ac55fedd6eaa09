# The project's tasks. Every target needs only Go; tools are pinned and run
# with `go run`, so nothing is installed globally.

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOFILES     := $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: all test test-postgres check fmt vet staticcheck generated bench bench-graphs fuzz example

all: check test

## test: the whole suite, race detector on (the README's test command),
## and the otel, mcpsdk and a2ahttp modules' (modules of their own, which
## ./... skips). The core module's run goes through go test -json and
## internal/testreport, which prints what go test prints plus one SKIP
## line per package whose PostgreSQL tests skipped for want of a server
## (a plain go test shows such a package as ok).
test:
	go test -race -timeout 30m -json ./... | go run ./internal/testreport
	cd otel && go test -race ./...
	cd mcpsdk && go test -race ./...
	cd a2ahttp && go test -race ./...
	cd examples/agents && go test -race ./...
	cd studio/bundle && go test -race ./...

## test-postgres: runtime/postgres and the conformance suite against the
## PostgreSQL server of ILMEK_POSTGRES_DSN (default: the local one, as
## .ci/run uses it).
PGDSN ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
test-postgres:
	ILMEK_POSTGRES_DSN=$${ILMEK_POSTGRES_DSN:-$(PGDSN)} CI=true go test -race -count=1 ./runtime/postgres/... ./conformance

## check: formatting, vet, staticcheck, and generated code up to date.
check: fmt vet staticcheck generated

fmt:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...
	cd otel && go vet ./...
	cd mcpsdk && go vet ./...
	cd a2ahttp && go vet ./...
	cd examples/agents && go vet ./...
	cd studio/bundle && go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...
	cd otel && go run $(STATICCHECK) ./...
	cd mcpsdk && go run $(STATICCHECK) ./...
	cd a2ahttp && go run $(STATICCHECK) ./...
	cd examples/agents && go run $(STATICCHECK) ./...
	cd studio/bundle && go run $(STATICCHECK) ./...

## generated: every committed generated package matches what ilmekgen
## writes today, and every example document is in canonical form.
generated:
	go test -count=1 -run 'TestGolden$$|TestExamplesUpToDate' ./gen/...
	go run ./cmd/ilmekgen fmt --check $$(git ls-files 'examples/*.json' 'examples/**/*.json')

## bench-graphs: the benchmark graphs of 200, 1,000 and 2,000 nodes,
## generated (not committed) into bench/graphs/_big, cached by document
## and generator, for builds with -tags bigbench.
bench-graphs:
	cd bench && go run ./internal/mkgraphs -big -dir graphs

## bench: the performance suite (BENCHMARKS.md): the runtime's and the
## generator's benchmarks, then the bench/ module (a module of its own, so
## the main module gains no dependency): every workload on the generated
## and the spec-built program with each checkpointer and on Eino, a
## generated chain with a generated child beside chain-200 (the subgraph
## boundary), the generator and `go build` of its output, one ilmek-bench line, and the
## table of it all. BENCHCOUNT (default 1) repeats each benchmark. The
## 200-, 1,000- and 2,000-node graphs are not committed: bench-graphs
## generates them into bench/graphs/_big (only what changed), and the
## bench module's steps build with -tags bigbench to include them.
bench: bench-graphs
	go test -run '^$$' -bench . -benchmem -timeout 1h ./runtime/... ./gen/...
	mkdir -p bench/results
	cd bench && go test -tags bigbench -run '^$$' -bench . -benchmem -timeout 2h -count $(or $(BENCHCOUNT),1) . > results/bench.txt; \
		s=$$?; cat results/bench.txt; exit $$s
	cd bench && go run -tags bigbench ./cmd/ilmek-bench --workload chain --n 100 --kind generated --ckpt none
	cd bench && go run -tags bigbench ./cmd/ilmek-bench --workload chat --n 3000 --ckpt sqlite
	cd bench && go run ./cmd/benchtable results/bench.txt > results/table.md && cat results/table.md

## fuzz: each fuzzer in turn (go test fuzzes one target at a time) for a
## fixed number of executions, sized to take about 10-20 s each on a
## two-core machine. Budgets are counts, not durations, on purpose: with a
## duration, Go 1.26's fuzz coordinator can report a spurious "context
## deadline exceeded" failure when the time runs out while a worker is busy
## (golang/go#75804, fixed in Go 1.27); a count has no deadline to race, so
## a slow machine only takes longer. FUZZTIME=30s (or 1000000x) overrides
## every budget; FUZZFLAGS adds flags, e.g. -parallel=1. The generator's
## fuzzers check each input for milliseconds, so the gen fuzzers minimize a
## new input for at most FUZZMINIMIZE tries, not for go test's 60 s. A
## failure writes its input to the package's testdata/fuzz/<Fuzzer>/.
FUZZMINIMIZE ?= 200x
fuzz:
	go test ./spec -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(or $(FUZZTIME),400000x) $(FUZZFLAGS)
	go test ./spec -run '^$$' -fuzz '^FuzzCompare$$' -fuzztime $(or $(FUZZTIME),200000x) $(FUZZFLAGS)
	go test ./gen -run '^$$' -fuzz '^FuzzGenerate$$' -fuzztime $(or $(FUZZTIME),8000x) -fuzzminimizetime $(FUZZMINIMIZE) $(FUZZFLAGS)
	go test ./gen -run '^$$' -fuzz '^FuzzPredicatesAgree$$' -fuzztime $(or $(FUZZTIME),15000x) -fuzzminimizetime $(FUZZMINIMIZE) $(FUZZFLAGS)
	go test ./mermaid -run '^$$' -fuzz '^FuzzMermaid$$' -fuzztime $(or $(FUZZTIME),120000x) -fuzzminimizetime $(FUZZMINIMIZE) $(FUZZFLAGS)
	go test ./runtime/checkpoint -run '^$$' -fuzz '^FuzzDelta$$' -fuzztime $(or $(FUZZTIME),400000x) $(FUZZFLAGS)
	go test ./nodes/skills -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),100000x) $(FUZZFLAGS)
	go test ./runtime/internal/store -run '^$$' -fuzz '^FuzzEventFrames$$' -fuzztime $(or $(FUZZTIME),100000x) $(FUZZFLAGS)
	go test ./runtime/internal/hexid -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),400000x) $(FUZZFLAGS)

## example: the main job, as the README shows it.
example:
	go run ./examples/support
