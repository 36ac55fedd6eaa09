package hostile_test

import (
	"context"
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/testdata/golden/hostile/hostilegraph"
)

type nodes struct{ t *testing.T }

func (n nodes) Interface(id hostilegraph.NodeID, cfg hostilegraph.InterfaceConfig) (hostilegraph.Node, error) {
	if id == hostilegraph.NodeState {
		if cfg.Text != "*/ package main; func init() { panic(1) } /*" || cfg.Raw != "`backtick` and \"quotes\"\nnewline \\ backslash" || cfg.F != 1e300 || cfg.N != 1234567890123456789 {
			n.t.Errorf("config of %v: %+v", id, cfg)
		}
	}
	return func(_ *runtime.Ctx, s hostilegraph.State) (hostilegraph.Update, error) {
		if id == hostilegraph.NodeState {
			return hostilegraph.Update{Type: new(any("*/ \"x\" `y`")), Func: []any{id.String()}}, nil
		}
		return hostilegraph.Update{Func: []any{id.String()}}, nil
	}, nil
}

func (n nodes) Default(id hostilegraph.NodeID, cfg hostilegraph.DefaultConfig) (hostilegraph.Node, error) {
	return func(*runtime.Ctx, hostilegraph.State) (hostilegraph.Update, error) {
		return hostilegraph.Update{Func: []any{cfg.Text}, Go: map[string]any{"*/": "`"}}, nil
	}, nil
}

func (n nodes) Chan(id hostilegraph.NodeID, cfg hostilegraph.ChanConfig) (hostilegraph.Node, error) {
	return func(*runtime.Ctx, hostilegraph.State) (hostilegraph.Update, error) {
		return hostilegraph.Update{String: new(any("")), Goto: []hostilegraph.Target{hostilegraph.To(hostilegraph.End)}}, nil
	}, nil
}

func TestRun(t *testing.T) {
	g, err := hostilegraph.New(nodes{t})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), hostilegraph.Update{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.State.MarshalJSON()
	want := `{"func":["state","plain"],"go":{"*/":"` + "`" + `"},"string":"","type":"*/ \"x\" ` + "`y`" + `"}`
	if string(got) != want {
		t.Errorf("state\n got %s\nwant %s", got, want)
	}
	if g.Shape().Name != "hostile */ `name` \"quoted\"\nline2 \u2028 // not a comment" {
		t.Errorf("name %q", g.Shape().Name)
	}
}

func TestRoundTrip(t *testing.T) {
	g, err := hostilegraph.New(nodes{t})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("spec.json")
	if eq, err := spec.JSONEqual(doc.Encode(), want); err != nil || !eq {
		t.Errorf("round trip differs (%v):\n%s", err, doc.Encode())
	}
}
