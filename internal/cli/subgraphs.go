package cli

import (
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// subgraphFlag is one --subgraph NAME=SPEC[,IMPORTPATH]: the document of
// the child graph NAME, and the import path of its generated package.
type subgraphFlag struct {
	name, spec, pkg string
}

// parseSubgraphFlags reads the --subgraph flags.
func parseSubgraphFlags(flags []string) ([]subgraphFlag, error) {
	var out []subgraphFlag
	seen := map[string]bool{}
	for _, f := range flags {
		name, rest, ok := strings.Cut(f, "=")
		if !ok || name == "" || rest == "" {
			return nil, &usageError{fmt.Sprintf("--subgraph %q: want NAME=SPEC or NAME=SPEC,IMPORTPATH", f)}
		}
		file, pkg, _ := strings.Cut(rest, ",")
		if file == "" {
			return nil, &usageError{fmt.Sprintf("--subgraph %q: want NAME=SPEC or NAME=SPEC,IMPORTPATH", f)}
		}
		if seen[name] {
			return nil, &usageError{fmt.Sprintf("--subgraph %s is given twice", name)}
		}
		seen[name] = true
		out = append(out, subgraphFlag{name: name, spec: file, pkg: pkg})
	}
	return out, nil
}

// checkSubgraphs decodes the child documents of the --subgraph flags and
// checks g's subgraph nodes against them (spec.CheckSubgraphs): an
// unregistered child, unknown channels, reducers that change a mapping's
// meaning, and a graph that contains itself, placed in g. The child
// documents' own diagnostics come first. Without --subgraph nothing is
// checked: the generated Nodes interface then has a method for the node
// type "subgraph", which wires the child by hand (runtime.RunSubgraph).
func (inv *Invocation) checkSubgraphs(g *spec.Graph) (spec.Diagnostics, error) {
	if len(inv.Subgraphs) == 0 {
		return nil, nil
	}
	var all spec.Diagnostics
	set := []*spec.Graph{g}
	for _, f := range inv.Subgraphs {
		child, _, diags, err := decodeSpec(inv.path(f.spec), f.spec)
		if err != nil {
			return nil, err
		}
		all = append(all, diags...)
		if child == nil {
			continue
		}
		if child.Name != f.name {
			all = append(all, spec.Diagnostic{Severity: spec.SeverityError, Path: "name", Pos: child.Pos("name"),
				Message: fmt.Sprintf("--subgraph %s names a document called %q", f.name, child.Name), Hint: "name the flag after the document's \"name\""})
			continue
		}
		set = append(set, child)
	}
	if all.HasErrors() {
		return all, nil
	}
	views := spec.SubgraphChildren(set...)
	delete(views, g.Name)
	return append(all, sortedDiags(spec.CheckSubgraphs(g, views))...), nil
}
