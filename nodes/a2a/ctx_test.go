package a2a_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// keeping is a transport that keeps every context it is given, as one may:
// net/http dials on in the background with the request's context after
// the request was cancelled.
type keeping struct {
	*a2atest.Transport
	mu   sync.Mutex
	kept []context.Context
}

func (k *keeping) Post(ctx context.Context, req *a2a.Request) (*a2a.Response, error) {
	k.mu.Lock()
	k.kept = append(k.kept, ctx)
	k.mu.Unlock()
	return k.Transport.Post(ctx, req)
}

// use calls every method of ctx as a goroutine that kept it would, and
// says how it failed.
func use(ctx context.Context) (failure string) {
	defer func() {
		if r := recover(); r != nil {
			failure = fmt.Sprint("panic: ", r)
		}
	}()
	_ = ctx.Err()
	_ = ctx.Done()
	_, _ = ctx.Deadline()
	_ = ctx.Value(struct{}{})
	_ = context.Cause(ctx)
	return ""
}

// TestTransportMayKeepItsContext: a transport may keep the context of a
// call past it, as net/http's background dial does; the node's *runtime.Ctx
// it gets stays usable after the node returned and after the run ended.
// Before the runtime stopped rewriting a handed-out Ctx, the dial read it
// while the run reused it (a data race) and, once the run ended,
// dereferenced nil.
func TestTransportMayKeepItsContext(t *testing.T) {
	for _, c := range []struct {
		name, typ, config string
		custom            func(a *a2a.Agent) runtime.NodeFunc
	}{
		{name: "a2a_call", typ: "a2a_call", config: `{"agent": "support-desk", "text": "where is my order?"}`},
		{name: "a2a_call with textOnly", typ: "a2a_call", config: `{"agent": "support-desk", "text": "where is my order?", "textOnly": true}`},
		{name: "Agent.Send", typ: "custom", custom: func(a *a2a.Agent) runtime.NodeFunc {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				r, err := a.Send(ctx, "where is my order?", a2a.SendOptions{})
				return runtime.Values{"result": r.Text}, err
			}
		}},
		{name: "Agent.Invoke given the node's Ctx", typ: "custom", custom: func(a *a2a.Agent) runtime.NodeFunc {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				r, err := a.Invoke(ctx, "where is my order?", a2a.SendOptions{})
				return runtime.Values{"result": r.Text}, err
			}
		}},
		{name: "Agent.GetTask given the node's Ctx", typ: "custom", custom: func(a *a2a.Agent) runtime.NodeFunc {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				r, err := a.GetTask(ctx, "task-1")
				return runtime.Values{"result": r.Text}, err
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			script, err := a2atest.Load(agentJSON)
			if err != nil {
				t.Fatal(err)
			}
			tr := &keeping{Transport: a2atest.NewTransport(script)}
			agent, err := a2a.Connect(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			reg := a2a.Registry(agent)
			config := c.config
			if c.custom != nil {
				reg["custom"] = func(spec.Node) (runtime.NodeFunc, error) { return c.custom(agent), nil }
				config = `{}`
			}
			g, err := runtime.Load("g.json", graphDoc(`{"id": "n", "type": "`+c.typ+`", "config": `+config+`}`,
				`{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}`), reg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, nil)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("run: %s, %v", res.Status, err)
			}
			tr.mu.Lock()
			defer tr.mu.Unlock()
			if len(tr.kept) != 1 {
				t.Fatalf("the transport got %d requests, want 1", len(tr.kept))
			}
			// The run has returned: a goroutine that kept the context
			// uses it now.
			if f := use(tr.kept[0]); f != "" {
				t.Errorf("the context the transport kept fails once the node returned: %s", f)
			}
		})
	}
}
