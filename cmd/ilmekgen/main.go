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

	"github.com/ilmek-go/ilmek/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
