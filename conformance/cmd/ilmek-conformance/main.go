// Command ilmek-conformance runs ilmek/1 conformance case files through the
// project's program kinds and reports each result:
//
//	go run ./conformance/cmd/ilmek-conformance [--kinds spec,generated] [--backends memory] [--predicates FILE] DIR...
//
// Every *.json file of each DIR is a case file (single-run or multi-run; the
// format is in conformance/README.md). The last line is "N passed, N
// failed"; the exit status is 1 when anything failed and 2 on usage errors.
package main

import (
	"os"

	"github.com/ilmek-go/ilmek/conformance/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
