// Command benchtable reads the output of the bench module's `go test
// -bench` run (stdin, or the files named) and prints one Markdown table:
// each workload and checkpointer against each program kind (generated,
// spec-built, Eino), in ns and CPU ns per superstep or task and allocations
// per superstep or task, with the ratios between them; then the figure
// reached for each target of the performance issue. A benchmark run more
// than once (-count) counts with its median.
//
//	go test -run '^$' -bench . -benchmem . | tee results/bench.txt
//	go run ./cmd/benchtable results/bench.txt
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	var in []io.Reader
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = append(in, os.Stdin)
	}
	res, err := Parse(io.MultiReader(in...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(res.rows) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no BenchmarkWorkloads lines in the input")
		os.Exit(1)
	}
	Write(os.Stdout, res)
}
