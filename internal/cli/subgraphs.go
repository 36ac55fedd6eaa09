package cli

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/gen"
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
//
// Every child given with an import path is returned among pkgs, for
// gen.Options.Subgraphs; when none is, pkgs is nil and the subgraph nodes
// are left to the Nodes method of their type.
func (inv *Invocation) checkSubgraphs(g *spec.Graph) (diags spec.Diagnostics, pkgs map[string]gen.SubgraphPackage, err error) {
	if len(inv.Subgraphs) == 0 {
		return nil, nil, nil
	}
	var all spec.Diagnostics
	set := []*spec.Graph{g}
	for _, f := range inv.Subgraphs {
		child, _, diags, err := decodeSpec(inv.path(f.spec), f.spec)
		if err != nil {
			return nil, nil, err
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
		if f.pkg != "" {
			if pkgs == nil {
				pkgs = map[string]gen.SubgraphPackage{}
			}
			pkgs[f.name] = gen.SubgraphPackage{Path: f.pkg, Doc: child}
		}
	}
	if all.HasErrors() {
		return all, nil, nil
	}
	views := spec.SubgraphChildren(set...)
	delete(views, g.Name)
	return append(all, sortedDiags(spec.CheckSubgraphs(g, views))...), pkgs, nil
}

// subgraphBinding is a bindings file's "subgraphs" entry: the document of
// a child graph, relative to the bindings file, and the import path of its
// generated package.
type subgraphBinding struct {
	Spec    string `json:"spec"`
	Package string `json:"package"`
}

// bindingsFile is the JSON shape of a --bindings file.
type bindingsFile struct {
	gen.BindingSpec
	Subgraphs map[string]subgraphBinding `json:"subgraphs,omitempty"`
}

// addSubgraphBindings adds the "subgraphs" entries of the bindings file
// to the --subgraph flags; a child named by both is a usage error.
func (inv *Invocation) addSubgraphBindings(file string, entries map[string]subgraphBinding) error {
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		e := entries[name]
		if name == "" || e.Spec == "" {
			return &usageError{fmt.Sprintf("%s: subgraphs entry %q needs a \"spec\" path", displayPath(file), name)}
		}
		for _, f := range inv.Subgraphs {
			if f.name == name {
				return &usageError{fmt.Sprintf("--subgraph %s: graph %q is also in the subgraphs of %s", name, name, displayPath(file))}
			}
		}
		p := e.Spec
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), filepath.FromSlash(p))
		}
		inv.Subgraphs = append(inv.Subgraphs, subgraphFlag{name: name, spec: p, pkg: e.Package})
	}
	return nil
}
