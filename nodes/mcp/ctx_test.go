package mcp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// keeping is a session that keeps every context it is given, as a session
// may: the MCP SDK notifies the server of a cancelled call from a goroutine
// of its own after the call returned, and net/http dials on in the
// background with the request's context.
type keeping struct {
	mcp.Session
	mu   sync.Mutex
	kept []context.Context
}

func (k *keeping) keep(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, ctx)
}

func (k *keeping) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	k.keep(ctx)
	return k.Session.CallTool(ctx, p)
}

func (k *keeping) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	k.keep(ctx)
	return k.Session.ReadResource(ctx, p)
}

func (k *keeping) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	k.keep(ctx)
	return k.Session.GetPrompt(ctx, p)
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

// TestSessionMayKeepItsContext: a session may keep the context of a call
// past it, as the MCP SDK does to notify the server of a call cancelled by
// the run's deadline; the node's *runtime.Ctx it gets stays usable after
// the node returned and after the run ended. Before the runtime stopped
// rewriting a handed-out Ctx, that notice crashed the process with a nil
// dereference.
func TestSessionMayKeepItsContext(t *testing.T) {
	for _, c := range []struct {
		name, typ, config string
		custom            func(tb *mcp.Toolbox) runtime.NodeFunc
	}{
		{name: "mcp_tool", typ: "mcp_tool", config: `{"server": "github", "tool": "github__search"}`},
		{name: "mcp_tool with text", typ: "mcp_tool", config: `{"server": "github", "tool": "github__search", "text": true}`},
		{name: "mcp_resource", typ: "mcp_resource", config: `{"server": "github", "uri": "file:///README.md"}`},
		{name: "Toolbox.Prompt", typ: "custom", config: `{}`, custom: func(tb *mcp.Toolbox) runtime.NodeFunc {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				text, err := tb.Prompt(ctx, "Code Review", nil)
				return runtime.Values{"result": text}, err
			}
		}},
		{name: "Toolbox.Invoke given the node's Ctx", typ: "custom", config: `{}`, custom: func(tb *mcp.Toolbox) runtime.NodeFunc {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				res, err := tb.Invoke(ctx, "github__search", nil)
				return runtime.Values{"result": res.Text}, err
			}
		}},
		{name: "Toolbox.FetchResource given the node's Ctx", typ: "custom", config: `{}`, custom: func(tb *mcp.Toolbox) runtime.NodeFunc {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				text, err := tb.FetchResource(ctx, "file:///README.md")
				return runtime.Values{"result": text}, err
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			sess := &keeping{Session: mcptest.NewSession(script(t))}
			tb, err := mcp.Connect(ctx, "github", sess)
			if err != nil {
				t.Fatal(err)
			}
			reg := mcp.Registry(tb)
			if c.custom != nil {
				reg["custom"] = func(spec.Node) (runtime.NodeFunc, error) { return c.custom(tb), nil }
			}
			g, err := runtime.Load("g.json", graphDoc(c.typ, c.config), reg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, nil)
			if err != nil || res.Status != runtime.StatusDone {
				t.Fatalf("run: %s, %v", res.Status, err)
			}
			sess.mu.Lock()
			defer sess.mu.Unlock()
			if len(sess.kept) != 1 {
				t.Fatalf("the session got %d calls, want 1", len(sess.kept))
			}
			// The run has returned: a goroutine that kept the context
			// uses it now.
			if f := use(sess.kept[0]); f != "" {
				t.Errorf("the context the session kept fails once the node returned: %s", f)
			}
		})
	}
}
