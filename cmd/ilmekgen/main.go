// Command ilmekgen compiles a stored ilmek graph spec (a JSON document) into
// a typed Go package, and checks, formats, compares and draws specs.
//
// Use it from go:generate, next to the spec:
//
//	//go:generate go tool ilmekgen -o supportgraph --type messages=[]string --type intent=string support.json
//
// ilmekgen --help lists the commands, their flags and the exit statuses;
// ilmekgen COMMAND --help describes one command. Diagnostics are printed as
// file:line:col: path: message, all of them, sorted. The generated package
// is documented by package gen; the command itself is package
// internal/cli.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ilmek-go/ilmek/internal/cli"
)

// memoryLimit is the soft limit of the Go heap unless GOMEMLIMIT sets
// another: the generator holds one output file at a time, so collecting
// before the heap doubles keeps even a document at the size limits in
// proportion (BENCHMARKS.md, "The generator in proportion") and costs a
// small document nothing.
const memoryLimit = 192 << 20

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
