// Package bench is ilmek's performance suite, a module of its own so that
// the main module gains no dependency: it runs the same workloads (package
// workload) as ilmekgen-generated programs (package graphs), as spec-built
// programs (runtime.FromSpec) and in Eino's compose graph API (package
// einobench), with no checkpointer, the in-memory one and SQLite, side by
// side in one `go test -bench` run; and it measures the generator. See
// BENCHMARKS.md at the repository root for the figures and the commands,
// cmd/ilmek-bench for the one-run-per-process harness and cmd/benchtable for
// the table `make bench` prints.
package bench
