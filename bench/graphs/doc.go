// Package graphs holds the benchmark graphs compiled by ilmekgen: one
// generated package per workload and size, the spec documents they come
// from, and the glue that implements each package's Nodes (<pkg>.go,
// written by internal/mkgraphs). Generated returns the program of a
// workload.
//
// The graphs of size 100 (chain100, fanout100, loop100) and fanoutsend
// (once, since its document does not depend on N) are committed, with
// their specs in specs/: they are what a reader opens. The 200-, 1,000-
// and 2,000-node graphs are generated when the benchmarks run, not
// committed: `go run ./internal/mkgraphs -big -dir graphs` (in the bench
// module; `make bench` runs it) writes them, their specs and the package
// that registers them into the gitignored _big/ directory, regenerating
// only what changed, and only a build with -tags bigbench (bigbench.go)
// imports them. Without the tag Generated reports those sizes as not
// expressible, so a fresh clone builds and vets without them.
//
// subchain100 (specs/subchain-100.json, also written by mkgraphs) is
// chain-100 whose middle node runs chain-100 as a subgraph, generated with
// --subgraph so that it runs the committed chain100 package; Subchain
// builds it for BenchmarkSubgraph, which sets it beside chain-200.
//
// Channels are bound to Go types: items to []int, counter to int.
package graphs

//go:generate go run ../internal/mkgraphs
//go:generate go tool ilmekgen -o chain100 --type items=[]int --type counter=int specs/chain-100.json
//go:generate go tool ilmekgen -o fanout100 --type items=[]int --type counter=int specs/fanout-100.json
//go:generate go tool ilmekgen -o loop100 --type items=[]int --type counter=int specs/loop-100.json
//go:generate go tool ilmekgen -o fanoutsend --type items=[]int --type counter=int specs/fanoutsend.json
//go:generate go tool ilmekgen -o subchain100 --type items=[]int --type counter=int --subgraph chain-100=specs/chain-100.json,github.com/ilmek-go/ilmek/bench/graphs/chain100 specs/subchain-100.json
