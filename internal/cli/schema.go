package cli

import (
	"fmt"
	"io"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/spec"
)

// runSchema is the schema command. Without flags it prints the JSON Schema
// of the spec document (spec.Schema); with --config NODETYPE=GOTYPE it
// resolves GOTYPE in the current module, as gen does, and prints the JSON
// Schema of that node type's config (gen.LoadConfigSchema); --config
// subgraph prints the schema of the subgraph node's config
// (spec.SubgraphConfigSchema).
func runSchema(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("schema")
	configFlags := fs.StringArray("config", nil, "print the schema of a node type's config bound to a Go type: NODETYPE=GOTYPE")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("schema takes no SPEC (got %q); it prints the schema of every spec, or with --config that of one node type's config", fs.Arg(0))}
	}
	switch len(*configFlags) {
	case 0:
		_, err := stdout.Write(spec.Schema())
		return err
	case 1:
	default:
		return &usageError{"schema takes one --config NODETYPE=GOTYPE; run it once per node type"}
	}
	if (*configFlags)[0] == spec.SubgraphType {
		// The runtime's own node type: its config is not bound to a Go type.
		_, err := stdout.Write(spec.SubgraphConfigSchema())
		return err
	}
	nodeType, goType, err := splitBinding("config", (*configFlags)[0])
	if err != nil {
		return err
	}
	out, err := gen.LoadConfigSchema(nodeType, goType, gen.LoadConfig{})
	if err != nil {
		fmt.Fprintf(stderr, "ilmekgen: %v\n", err)
		return errReported
	}
	_, err = stdout.Write(out)
	return err
}
