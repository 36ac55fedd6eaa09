package main

import (
	"fmt"
	"path/filepath"

	"github.com/ilmek-go/ilmek/bench/workload"
	"github.com/ilmek-go/ilmek/spec"
)

// SubchainName is the document name of the subgraph benchmark's parent:
// chain-100 whose middle node runs chain-100 as a subgraph.
const SubchainName = "subchain-100"

// subchainFile returns the parent document of the subgraph benchmark,
// relative to the graphs directory: chain-100 renamed, its middle node n50
// replaced by a subgraph node that runs chain-100 (the committed chain100
// package, wired in by ilmekgen --subgraph) with the recursion limit its
// 100 supersteps need (a child run has a limit of its own), and takes the
// child's final items. A run takes 100 parent supersteps and 100 child ones, as chain-200
// takes 200, and pushes 199 items (the subgraph node pushes none itself).
func subchainFile() (File, error) {
	child := workload.Workload{Kind: "chain", N: 100}
	doc, err := child.Spec()
	if err != nil {
		return File{}, err
	}
	mid := doc.Nodes[len(doc.Nodes)/2]
	if mid.ID != "n50" {
		return File{}, fmt.Errorf("subchain: middle node of %s is %q, want n50", child, mid.ID)
	}
	doc.Name = SubchainName
	doc.Nodes[len(doc.Nodes)/2] = spec.Node{ID: mid.ID, Type: spec.SubgraphType,
		Config: []byte(fmt.Sprintf(`{"graph": %q, "limit": %d, "out": {"items": "items"}}`, child.SpecName(), child.RecursionLimit()))}
	data := doc.Encode()
	if _, diags := spec.Decode(SubchainName+".json", data); diags.Err() != nil {
		return File{}, fmt.Errorf("subchain: %w", diags.Err())
	}
	return File{Name: filepath.Join("specs", SubchainName+".json"), Data: data}, nil
}
