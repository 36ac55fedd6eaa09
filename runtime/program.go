package runtime

import "github.com/ilmek-go/ilmek/runtime/internal/contract"

// The contract between the executor and the programs it runs (graphs
// built from a document or in Go code, generated packages) lives in
// runtime/internal/contract, below this package, so that runtime/genimpl
// can hand it to generated code; these are its instances over runtime's
// own types.
type (
	program[S, U any]      = contract.Program[*Ctx, *Shape, S, U]
	writeEncoder[S, U any] = contract.WriteEncoder[ChannelWrite, S, U]
	target[S any]          = contract.Target[S]
	plan[S any]            = contract.Task[S]
)

const (
	endNode   = contract.EndNode
	startNode = contract.StartNode
)

// Shape is the static description of a graph that nodes may inspect through
// Ctx.Graph. It is shared and must not be modified.
type Shape struct {
	Name     string
	Nodes    []NodeShape
	Channels []ChannelShape
}

// NodeShape is one node of a Shape.
type NodeShape struct {
	ID   string
	Type string // "" for a code-defined node without a registry type
}

// ChannelShape is one channel of a Shape.
type ChannelShape struct {
	Name    string
	Reducer string // "last_write", "append", "merge" or "custom"
}

// NodeIndex returns the index of the node with the given id, or -1.
func (s *Shape) NodeIndex(id string) int {
	for i := range s.Nodes {
		if s.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}
