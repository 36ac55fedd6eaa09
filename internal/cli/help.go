package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// helpError is a subcommand's -h or --help: run prints that subcommand's
// help (its flags, as pflag lists them, and an example), not the overview.
type helpError struct{ fs *pflag.FlagSet }

func (e *helpError) Error() string { return "help requested for " + e.fs.Name() }
func (e *helpError) Unwrap() error { return pflag.ErrHelp }

// commandHelp is the first lines of each subcommand's help: how to call it,
// what it does, and an example.
var commandHelp = map[string]string{
	"gen": `Usage: ilmekgen [gen] [flags] SPEC

Generates the typed Go package of SPEC into the directory -o. With
--subgraph NAME=SPEC,IMPORTPATH (or a "subgraphs" entry of the bindings
file), the subgraph nodes naming NAME run the child's generated package at
IMPORTPATH: Nodes asks for the child's Nodes, and each mapped channel is
an assignment that fails to compile when the two channels' Go types differ.

Example, next to the spec:

  //go:generate go tool ilmekgen -o supportgraph --type messages=[]string --type intent=string support.json
  //go:generate go tool ilmekgen -o supportgraph --subgraph refund=refund.json,example.com/app/refundgraph support.json
`,
	"check": `Usage: ilmekgen check [flags] SPEC...

Checks each SPEC (and its bindings) as gen would, and writes nothing. With
--subgraph NAME=SPEC, the subgraph nodes are checked against the child
documents too (gen takes the flag as well).

Example:

  ilmekgen check --type intent=string --config llm=example.com/shop.LLMOptions support.json
  ilmekgen check --subgraph refund=refund.json support.json
`,
	"fmt": `Usage: ilmekgen fmt [-w] [--check] SPEC...

Prints the canonical form of each SPEC (stable key order and indentation).

Example:

  ilmekgen fmt --check $(git ls-files '*.json')
`,
	"mermaid": `Usage: ilmekgen mermaid [flags] SPEC

Prints SPEC as a Mermaid flowchart in the ilmek/1 format (MODEL.md §9.1).

Example:

  ilmekgen mermaid --direction LR support.json
`,
	"schema": `Usage: ilmekgen schema [--config TYPE=GOTYPE]

Prints the JSON Schema of a spec document, or of a node type's config bound
to a Go struct, or (--config subgraph) of a subgraph node's config.

Example:

  ilmekgen schema --config llm=example.com/shop.LLMOptions
  ilmekgen schema --config subgraph
`,
	"version": `Usage: ilmekgen version

Prints the version of ilmekgen and of the generated code's contract.
`,
	"diff": `Usage: ilmekgen diff [--json] [--subgraph NAME=SPEC]... [--old-subgraph NAME=SPEC]... OLD NEW

Prints the changes from OLD to NEW, each safe or unsafe for paused and for
new threads. Exit status 3 when a change is unsafe.

With --subgraph, the documents are compared as the runtime versions them:
each subgraph node pinned to its child's version (the children given with
--subgraph for NEW, and for OLD unless --old-subgraph gives OLD's). A new
child version is then a changed config of the node that runs it, unsafe
for threads paused inside the child. A document that pins its children
("fingerprint" in the node's config) shows that without the flags.

Examples:

  ilmekgen diff approval-v3.json approval-v4.json
  ilmekgen diff --old-subgraph refund=refund-v1.json --subgraph refund=refund-v2.json support.json support.json
`,
}

// subcommandHelp is the help of the subcommand fs parses.
func subcommandHelp(fs *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString(commandHelp[fs.Name()])
	if flags := fs.FlagUsages(); flags != "" {
		b.WriteString("\nFlags:\n")
		b.WriteString(flags)
	}
	fmt.Fprintf(&b, "\nRun 'ilmekgen help' for every command.\n")
	return b.String()
}
