// Command ilmekgen compiles a stored ilmek graph spec (a JSON document) into
// a typed Go package, and checks, formats and draws specs.
//
// Use it from go:generate, next to the spec:
//
//	//go:generate go tool ilmekgen -o supportgraph --type messages=[]string --type intent=string support.json
//
// Commands:
//
//	ilmekgen [gen] [flags] SPEC      generate the package (the default command)
//	ilmekgen check [flags] SPEC...   check specs (and bindings) without generating
//	ilmekgen fmt [-w] [--check] SPEC...  print or write the canonical form
//	ilmekgen mermaid SPEC            print a Mermaid flowchart of the graph
//	ilmekgen schema [--config T=GOTYPE]  print the JSON Schema of a spec, or of a bound config
//	ilmekgen version                 print the version
//
// Flags of gen (and check): -o/--out DIR (default "."), -p/--package NAME
// (default: the output directory's name), --type CHANNEL=GOTYPE and
// --config NODETYPE=GOTYPE (repeatable), --bindings FILE (a JSON file
// {"channels": {...}, "configs": {...}}), and --check (exit 1 naming the
// stale generated files instead of writing them). GOTYPE is a Go type with
// full import paths: string, float64, []example.com/chat.Message,
// *example.com/shop.Cart, map[string]example.com/x.Y.
//
// Diagnostics are printed as file:line:col: path: message, all of them,
// sorted. Exit status: 0 success, 1 spec or binding errors (or stale files
// with --check), 2 usage errors. The generated package is documented by
// package gen.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
