package crashtest

//go:generate go tool ilmekgen -o crashgraph --type receipt=string --type shipped=bool crash.json

import (
	"context"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/crashtest/crashgraph"
)

// Generated is the graph of crash.json compiled by ilmekgen (crashgraph),
// with typed nodes calling fx.A and fx.B.
var Generated = Kind{Name: "generated", Build: func(fx *Effects) (Runner, error) {
	g, err := crashgraph.New(crashNodes{fx: fx})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, cp runtime.Checkpointer, thread string) (runtime.Status, error) {
		res, err := g.Thread(cp, thread).Invoke(ctx, crashgraph.Update{})
		return res.Status, err
	}, nil
}}

// crashNodes implements crashgraph.Nodes.
type crashNodes struct{ fx *Effects }

// Charge builds node "a".
func (n crashNodes) Charge(crashgraph.NodeID, crashgraph.ChargeConfig) (crashgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ crashgraph.State) (crashgraph.Update, error) {
		r, err := n.fx.A(ctx)
		if err != nil {
			return crashgraph.Update{}, err
		}
		return crashgraph.Update{Receipt: new(r)}, nil
	}, nil
}

// Ship builds node "b".
func (n crashNodes) Ship(crashgraph.NodeID, crashgraph.ShipConfig) (crashgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ crashgraph.State) (crashgraph.Update, error) {
		if err := n.fx.B(ctx); err != nil {
			return crashgraph.Update{}, err
		}
		return crashgraph.Update{Shipped: new(true)}, nil
	}, nil
}
