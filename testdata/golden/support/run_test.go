package support_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/testdata/golden/support/supportgraph"
)

// nodes implements supportgraph.Nodes with fakes.
type nodes struct{ t *testing.T }

func (n nodes) LLM(id supportgraph.NodeID, cfg supportgraph.LLMConfig) (supportgraph.Node, error) {
	if id != supportgraph.NodeAgent || cfg.Model != "chat-large" || len(cfg.Tools) != 1 || cfg.Tools[0] != "search" {
		n.t.Errorf("LLM(%v, %+v): unexpected id or config", id, cfg)
	}
	return func(ctx *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		reply, err := runtime.Step(ctx, "reply", func() (string, error) { return "you want to buy the blue one", nil })
		if err != nil {
			return supportgraph.Update{}, err
		}
		intent := "chat"
		if strings.Contains(s.Messages[len(s.Messages)-1], "buy") {
			intent = "buy"
		}
		return supportgraph.Update{Messages: []string{reply}, Intent: new(intent)}, nil
	}, nil
}

func (n nodes) HTTP(id supportgraph.NodeID, cfg supportgraph.HTTPConfig) (supportgraph.Node, error) {
	if cfg.URL != "https://shop.example/checkout" {
		n.t.Errorf("HTTP config %+v", cfg)
	}
	return func(ctx *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		return supportgraph.Update{Cart: new(any(map[string]any{"item": "blue", "paid": true})), Messages: []string{"paid"}}, nil
	}, nil
}

func TestRun(t *testing.T) {
	g, err := supportgraph.New(nodes{t})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), supportgraph.Update{Messages: []string{"I want to buy the blue one"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.State.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cart":{"item":"blue","paid":true},"intent":"buy","messages":["I want to buy the blue one","you want to buy the blue one","paid"]}`
	if string(got) != want {
		t.Errorf("state\n got %s\nwant %s", got, want)
	}
	if res.Supersteps != 2 {
		t.Errorf("supersteps = %d, want 2", res.Supersteps)
	}

	res, err = g.Invoke(context.Background(), supportgraph.Update{Messages: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.State.HasCart() || res.State.Intent != "chat" || res.Supersteps != 1 {
		t.Errorf("chat turn: %+v", res)
	}
}

func TestRoundTrip(t *testing.T) {
	g, err := supportgraph.New(nodes{t})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("spec.json")
	if err != nil {
		t.Fatal(err)
	}
	if eq, err := spec.JSONEqual(doc.Encode(), want); err != nil || !eq {
		t.Errorf("ToSpec is not the spec (err %v):\n%s", err, doc.Encode())
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	g, err := supportgraph.New(nodes{t})
	if err != nil {
		t.Fatal(err)
	}
	mem := checkpoint.NewMemory()
	ctx := context.Background()
	th := g.Thread(mem, "t1")
	if _, err := th.Invoke(ctx, supportgraph.Update{Messages: []string{"buy"}}); err != nil {
		t.Fatal(err)
	}
	res, err := th.Invoke(ctx, supportgraph.Update{Messages: []string{"hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.State.Messages); n != 5 || !res.State.HasCart() {
		t.Errorf("second turn state: %+v", res.State)
	}
}
