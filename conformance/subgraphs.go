package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// ExtensionSubgraphs is the "extension" of a case file whose spec holds
// "subgraph" nodes and whose "subgraphs" member holds the child documents
// by name: this project's extension of ilmek/1 (the reference has no
// subgraphs; its MODEL reserves the events' ns). Such cases run through
// every kind: the generated kind generates each child document into a
// package of its own and wires it into the parent's (gen.SubgraphPackage),
// as ilmekgen --subgraph NAME=SPEC,IMPORTPATH does.
const ExtensionSubgraphs = "ilmek-go/subgraphs"

// buildChildren builds the child documents of c (Case.Subgraphs) with
// build, each with the children its own subgraph nodes name, and returns
// them by name. A child document that is invalid, or a cycle, is an error.
func buildChildren(c *Case, build func(doc *spec.Graph, children []runtime.Child) (runtime.Child, error)) ([]runtime.Child, error) {
	if len(c.Subgraphs) == 0 {
		return nil, nil
	}
	docs := map[string]*spec.Graph{}
	for _, name := range slices.Sorted(maps.Keys(c.Subgraphs)) {
		doc, diags := spec.Decode(c.File+"#subgraphs."+name, c.Subgraphs[name])
		if err := diags.Err(); err != nil {
			return nil, &runtime.SpecError{Msg: err.Error(), Err: err}
		}
		if doc.Name != name {
			return nil, &runtime.SpecError{Msg: fmt.Sprintf("subgraphs.%s: the document is named %q", name, doc.Name)}
		}
		docs[name] = doc
	}
	all := slices.Collect(maps.Values(docs))
	if err := spec.CheckSubgraphCycles(all...).Err(); err != nil {
		return nil, &runtime.SpecError{Msg: err.Error(), Err: err}
	}
	built := map[string]runtime.Child{}
	var get func(name string) (runtime.Child, error)
	get = func(name string) (runtime.Child, error) {
		if ch, ok := built[name]; ok {
			return ch, nil
		}
		doc := docs[name]
		var kids []runtime.Child
		for _, n := range doc.Nodes {
			if n.Type != spec.SubgraphType {
				continue
			}
			var cfg spec.SubgraphConfig
			if json.Unmarshal(n.Config, &cfg) != nil || docs[cfg.Graph] == nil {
				continue // the build refuses it, placed
			}
			k, err := get(cfg.Graph)
			if err != nil {
				return nil, err
			}
			kids = append(kids, k)
		}
		ch, err := build(doc, kids)
		if err != nil {
			return nil, fmt.Errorf("subgraphs.%s: %w", name, err)
		}
		built[name] = ch
		return ch, nil
	}
	var out []runtime.Child
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		ch, err := get(name)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}
