package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/examples/support/supportgraph"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// pausingNodes implements supportgraph.Nodes: the agent says "buy", the
// checkout asks for an approval.
type pausingNodes struct{}

func (pausingNodes) LLM(supportgraph.NodeID, supportgraph.LLMConfig) (supportgraph.Node, error) {
	return func(ctx *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		return supportgraph.Update{Messages: []string{"ok"}, Intent: new("buy")}, nil
	}, nil
}

func (pausingNodes) HTTP(supportgraph.NodeID, supportgraph.HTTPConfig) (supportgraph.Node, error) {
	return func(ctx *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		if _, err := runtime.Interrupt[string](ctx, "charge?"); err != nil {
			return supportgraph.Update{}, err
		}
		return supportgraph.Update{Messages: []string{"charged"}}, nil
	}, nil
}

// supportRegistry is the same behaviour for spec-built versions.
func supportRegistry() runtime.Registry {
	return runtime.Registry{
		"llm": func(spec.Node) (runtime.NodeFunc, error) {
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				return runtime.Values{"messages": "ok", "intent": "buy"}, nil
			}, nil
		},
		"http": func(spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				if _, err := runtime.Interrupt[string](ctx, "charge?"); err != nil {
					return nil, err
				}
				return runtime.Values{"messages": "charged"}, nil
			}, nil
		},
		"mail": func(spec.Node) (runtime.NodeFunc, error) {
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
		},
	}
}

// A generated package applies the same rule as a spec-built graph: its
// fingerprint is its embedded document's, and a thread paused by it in
// "checkout" meets changed versions (spec-built here, since one binary
// holds one generated package of this document) exactly as Compatible
// says; a thread paused by a spec-built version meets the generated one
// the same way.
func TestGeneratedVersionsFollowTheRule(t *testing.T) {
	ctx := context.Background()
	raw, err := os.ReadFile("../examples/support/support.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	gen, err := supportgraph.New(pausingNodes{})
	if err != nil {
		t.Fatal(err)
	}
	decoded, diags := spec.Decode("support.json", raw)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if gen.Fingerprint() != decoded.Fingerprint() {
		t.Fatalf("generated graph fingerprint %s, its document's %s", gen.Fingerprint(), decoded.Fingerprint())
	}
	variant := func(from, to string) *runtime.Graph[runtime.Values, runtime.Values] {
		t.Helper()
		if !strings.Contains(doc, from) {
			t.Fatalf("%q not in support.json", from)
		}
		g, err := runtime.Load("support.json", []byte(strings.Replace(doc, from, to, 1)), supportRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	withoutCheckout := func() *runtime.Graph[runtime.Values, runtime.Values] {
		t.Helper()
		d := decoded.Clone()
		d.Nodes = d.Nodes[:1] // agent only
		d.Edges = []spec.Edge{{From: spec.Start, To: "agent"}, {From: "agent", To: spec.End}}
		g, err := runtime.FromSpec(d, supportRegistry())
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	type resumer func(thread string, mem runtime.Checkpointer) error
	specResume := func(g *runtime.Graph[runtime.Values, runtime.Values]) resumer {
		return func(thread string, mem runtime.Checkpointer) error {
			res, err := g.Thread(mem, thread).Resume(ctx, runtime.Answer("yes"))
			if err == nil && res.Status != runtime.StatusDone {
				return fmt.Errorf("not done: %v", res.Status)
			}
			return err
		}
	}
	genResume := func(thread string, mem runtime.Checkpointer) error {
		res, err := gen.Thread(mem, thread).Resume(ctx, runtime.Answer("yes"))
		if err == nil && res.Status != runtime.StatusDone {
			return fmt.Errorf("not done: %v", res.Status)
		}
		return err
	}
	genPause := func(thread string, mem runtime.Checkpointer) {
		t.Helper()
		res, err := gen.Thread(mem, thread).Invoke(ctx, supportgraph.Update{Messages: []string{"hi"}})
		if err != nil || res.Status != runtime.StatusInterrupted {
			t.Fatalf("generated run: %v %v", res.Status, err)
		}
	}
	specPause := func(g *runtime.Graph[runtime.Values, runtime.Values]) func(string, runtime.Checkpointer) {
		return func(thread string, mem runtime.Checkpointer) {
			t.Helper()
			res, err := g.Thread(mem, thread).Invoke(ctx, runtime.Values{"messages": "hi"})
			if err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("spec-built run: %v %v", res.Status, err)
			}
		}
	}
	cases := []struct {
		name   string
		pause  func(string, runtime.Checkpointer)
		resume resumer
		want   runtime.ReasonKind
	}{
		{"generated, then (a) added node", genPause, specResume(variant(`"nodes": [`, `"nodes": [{"id": "notify", "type": "mail"},`)), ""},
		{"generated, then (b) removed the paused node", genPause, specResume(withoutCheckout()), runtime.ReasonNodeMissing},
		{"generated, then (c) renamed a held channel", genPause, specResume(variant(`"messages": {`, `"log": {`)), runtime.ReasonChannelMissing},
		{"generated, then (d) changed reducer", genPause, specResume(variant(`"reducer": "append"`, `"reducer": "last_write"`)), runtime.ReasonReducer},
		{"generated, then (e) changed predicate", genPause, specResume(variant(`"neq": "buy"`, `"eq": "browse"`)), ""},
		{"generated, then (f) changed config of the paused node", genPause, specResume(variant(`"https://shop.example/checkout"`, `"https://shop.example/v2/checkout"`)), runtime.ReasonNodeConfig},
		{"spec-built (e) predicate, then generated", specPause(variant(`"neq": "buy"`, `"eq": "browse"`)), genResume, ""},
		{"spec-built (f) config, then generated", specPause(variant(`"https://shop.example/checkout"`, `"https://shop.example/v2/checkout"`)), genResume, runtime.ReasonNodeConfig},
		{"spec-built with an x- member only, then generated", specPause(variant(`"reducer": "last_write"`, `"reducer": "last_write", "x-note": "moved"`)), genResume, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkpoint.NewMemory()
			tc.pause("t", mem)
			before, _ := mem.List(ctx, "t", 0)
			err := tc.resume("t", mem)
			after, _ := mem.List(ctx, "t", 0)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("resume: %v", err)
				}
				return
			}
			var ie *runtime.IncompatibleError
			if !errors.As(err, &ie) || len(ie.Reasons) != 1 || ie.Reasons[0].Kind != tc.want {
				t.Fatalf("resume: %v, want one %s", err, tc.want)
			}
			if len(after) != len(before) {
				t.Errorf("a refused resume wrote %d checkpoints", len(after)-len(before))
			}
		})
	}
}
