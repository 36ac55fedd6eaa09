package graphs

import (
	"context"

	"github.com/ilmek-go/ilmek/bench/graphs/chain100"
	"github.com/ilmek-go/ilmek/bench/graphs/subchain100"
	"github.com/ilmek-go/ilmek/bench/workload"
	"github.com/ilmek-go/ilmek/runtime"
)

// The subgraph benchmark's parent (specs/subchain-100.json, written by
// mkgraphs): chain-100 whose middle node n50 runs the generated chain-100
// as a subgraph. It is no workload of the suite (no engine but ilmek's
// generated code has subgraphs), so Subchain, not Generated, builds it.
// This file is written by hand, not by mkgraphs.

func init() { committed++ } // the subchain100 //go:generate line of doc.go

// SubchainItems is what a run of Subchain pushes, in order: n0…n49, the
// child's n0…n99, n51…n99 (199 items; the subgraph node pushes none).
func SubchainItems() []int {
	out := make([]int, 0, 199)
	for i := range 50 {
		out = append(out, i)
	}
	for i := range 100 {
		out = append(out, i)
	}
	for i := 51; i < 100; i++ {
		out = append(out, i)
	}
	return out
}

// subchainNodes implements subchain100.Nodes: the push bodies of chain-100,
// and the child's nodes for the subgraph node.
type subchainNodes struct{}

// Push appends the number the node's id ends with.
func (subchainNodes) Push(id subchain100.NodeID, _ subchain100.PushConfig) (subchain100.Node, error) {
	i, err := workload.Index(id.String())
	if err != nil {
		return nil, err
	}
	u := subchain100.Update{Items: []int{i}}
	return func(*runtime.Ctx, subchain100.State) (subchain100.Update, error) { return u, nil }, nil
}

// SubgraphChain100 is the child's nodes: chain100's own glue.
func (subchainNodes) SubgraphChain100() chain100.Nodes { return chain100Nodes{} }

// Subchain builds the generated program of the subgraph benchmark's
// parent. Its runs take 100 supersteps of the parent and 100 of the child
// (run with a recursion limit of at least 101, as chain-200 with 201).
func Subchain() (workload.Program, error) {
	g, err := subchain100.New(subchainNodes{})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, th *workload.Thread, opts ...runtime.RunOption) (workload.Outcome, error) {
		res, err := workload.Invoke(ctx, g, th, subchain100.Update{}, opts...)
		if err != nil {
			return workload.Outcome{}, err
		}
		return workload.Outcome{Supersteps: res.Supersteps, Items: res.State.Items, Counter: res.State.Counter}, nil
	}, nil
}
