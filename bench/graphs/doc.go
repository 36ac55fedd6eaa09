// Package graphs holds the benchmark graphs compiled by ilmekgen: one
// generated package per workload and committed size (chain, fanout and
// loop at 100, 200, 1,000 and 2,000; fanoutsend once, since its document
// does not depend on N), the spec documents they come from (specs/), and
// the glue that implements each package's Nodes (<pkg>.go, written by
// internal/mkgraphs). Generated returns the program of a workload.
//
// Channels are bound to Go types: items to []int, counter to int.
package graphs

//go:generate go run ../internal/mkgraphs
//go:generate go tool ilmekgen -o chain100 --type items=[]int --type counter=int specs/chain-100.json
//go:generate go tool ilmekgen -o chain200 --type items=[]int --type counter=int specs/chain-200.json
//go:generate go tool ilmekgen -o chain1000 --type items=[]int --type counter=int specs/chain-1000.json
//go:generate go tool ilmekgen -o chain2000 --type items=[]int --type counter=int specs/chain-2000.json
//go:generate go tool ilmekgen -o fanout100 --type items=[]int --type counter=int specs/fanout-100.json
//go:generate go tool ilmekgen -o fanout200 --type items=[]int --type counter=int specs/fanout-200.json
//go:generate go tool ilmekgen -o fanout1000 --type items=[]int --type counter=int specs/fanout-1000.json
//go:generate go tool ilmekgen -o fanout2000 --type items=[]int --type counter=int specs/fanout-2000.json
//go:generate go tool ilmekgen -o loop100 --type items=[]int --type counter=int specs/loop-100.json
//go:generate go tool ilmekgen -o loop200 --type items=[]int --type counter=int specs/loop-200.json
//go:generate go tool ilmekgen -o loop1000 --type items=[]int --type counter=int specs/loop-1000.json
//go:generate go tool ilmekgen -o loop2000 --type items=[]int --type counter=int specs/loop-2000.json
//go:generate go tool ilmekgen -o fanoutsend --type items=[]int --type counter=int specs/fanoutsend.json
