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

## bench: the benchmarks, with allocations.
bench:
	go test -run '^$$' -bench . -benchmem ./runtime/... ./gen/...

## fuzz: each fuzzer for FUZZTIME (default 30s).
fuzz:
	go test ./spec -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	go test ./gen -run '^$$' -fuzz '^FuzzGenerate$$' -fuzztime $(FUZZTIME)

## example: the main job, as the README shows it.
example:
	go run ./examples/support
