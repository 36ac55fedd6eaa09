// Package bench is ilmek's performance suite, a module of its own so that
// the main module gains no dependency: it runs the same workloads (package
// workload) as ilmekgen-generated programs (package graphs), as spec-built
// programs (runtime.FromSpec) and in Eino's compose graph API (package
// einobench), with no checkpointer, the in-memory one and SQLite, side by
// side in one `go test -bench` run; and it measures the generator. See
// BENCHMARKS.md at the repository root for the figures and the commands,
// cmd/ilmek-bench for the one-run-per-process harness and cmd/benchtable for
// the table `make bench` prints.
//
// The generated programs of size 100 (and fanoutsend) are committed; those
// of 200, 1,000 and 2,000 nodes are generated when the benchmarks run:
//
//	go run ./internal/mkgraphs -big -dir graphs   # writes graphs/_big, only what changed
//	go test -tags bigbench -run '^$' -bench 'Workloads/chain-1000/' .
//
// Without -tags bigbench those sizes are skipped as not expressible, so
// `go build ./...` and `go vet ./...` work on a fresh clone.
package bench
