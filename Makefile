# The project's tasks. Every target needs only Go; tools are pinned and run
# with `go run`, so nothing is installed globally.

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOFILES     := $(shell git ls-files '*.go' 2>/dev/null)
FUZZTIME    ?= 30s

.PHONY: all test check fmt vet staticcheck generated bench fuzz example

all: check test

## test: the whole suite, race detector on (the README's test command).
test:
	go test -race ./...

## check: formatting, vet, staticcheck, and generated code up to date.
check: fmt vet staticcheck generated

fmt:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...

## generated: every committed generated package matches what ilmekgen
## writes today, and every example document is in canonical form.
generated:
	go test -count=1 -run 'TestGolden$$|TestExamplesUpToDate' ./gen/...
	go run ./cmd/ilmekgen fmt --check $$(git ls-files 'examples/*.json' 'examples/**/*.json')

## bench: the performance suite (BENCHMARKS.md): the runtime's and the
## generator's benchmarks, then the bench/ module (a module of its own, so
## the main module gains no dependency): every workload on the generated
## and the spec-built program with each checkpointer and on Eino, the
## generator and `go build` of its output, one ilmek-bench line, and the
## table of it all. BENCHCOUNT (default 1) repeats each benchmark.
bench:
	go test -run '^$$' -bench . -benchmem ./runtime/... ./gen/...
	mkdir -p bench/results
	cd bench && go test -run '^$$' -bench . -benchmem -count $(or $(BENCHCOUNT),1) . > results/bench.txt; \
		s=$$?; cat results/bench.txt; exit $$s
	cd bench && go run ./cmd/ilmek-bench --workload chain --n 100 --kind generated --ckpt none
	cd bench && go run ./cmd/benchtable results/bench.txt > results/table.md && cat results/table.md

## fuzz: each fuzzer for FUZZTIME (default 30s), one after another (go test
## fuzzes one target at a time); FUZZFLAGS adds flags, e.g. -parallel=1 on a
## shared machine. The generator's fuzzers check each input for tens of
## milliseconds, so they minimize a new input for 5s at most (not 60s). A
## failure writes its input to the package's testdata/fuzz/<Fuzzer>/.
fuzz:
	go test ./spec -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS)
	go test ./gen -run '^$$' -fuzz '^FuzzGenerate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $(FUZZFLAGS)
	go test ./gen -run '^$$' -fuzz '^FuzzPredicatesAgree$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $(FUZZFLAGS)
	go test ./gen -run '^$$' -fuzz '^FuzzMermaid$$' -fuzztime $(FUZZTIME) $(FUZZFLAGS)

## example: the main job, as the README shows it.
example:
	go run ./examples/support
