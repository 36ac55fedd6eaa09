package mcp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/nodes"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// steps records the key of every journaled step and whether it replayed.
type steps struct {
	runtime.NopObserver
	mu   sync.Mutex
	keys []string
}

func (o *steps) Step(_ context.Context, _ runtime.TaskRecord, s runtime.StepRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := s.Key
	if s.Replayed {
		k += " (replayed)"
	}
	o.keys = append(o.keys, k)
}

func graphDoc(nodeType, config string) []byte {
	return []byte(`{"name": "g", "channels": {"result": {}, "hits": {}, "query": {}, "answer": {}},
  "nodes": [{"id": "n", "type": "` + nodeType + `", "config": ` + config + `}],
  "edges": [{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}]}`)
}

// thenAsk wraps the node type typ of reg in one that pauses for a person
// after it ran, so the node's task replays on resume.
func thenAsk(reg runtime.Registry, typ string) runtime.Registry {
	f := reg[typ]
	reg[typ+"_then_ask"] = func(n spec.Node) (runtime.NodeFunc, error) {
		fn, err := f(n)
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			out, err := fn(ctx, s)
			if err != nil {
				return nil, err
			}
			ans, err := runtime.Interrupt[string](ctx, "go on?")
			if err != nil {
				return nil, err
			}
			out["answer"] = ans
			return out, nil
		}, nil
	}
	return reg
}

func TestToolNodeCallsOnceAcrossResume(t *testing.T) {
	ctx := context.Background()
	sess := mcptest.NewSession(script(t))
	tb, err := mcp.Connect(ctx, "github", sess)
	if err != nil {
		t.Fatal(err)
	}
	obs := &steps{}
	g, err := runtime.Load("g.json", graphDoc("mcp_tool_then_ask",
		`{"server": "github", "tool": "github__search", "arguments": {"q": "x", "limit": 5}, "argumentsFrom": "query", "to": "hits"}`),
		thenAsk(mcp.Registry(tb), "mcp_tool"), runtime.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	store := checkpoint.NewMemory()
	thread := g.Thread(store, "t-1")
	res, err := thread.Invoke(ctx, runtime.Values{"query": map[string]any{"q": "ilmek", "page": 2}})
	if err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %v, %v", res.Status, err)
	}
	res, err = thread.Resume(ctx, runtime.Answer("yes"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %v, %v", res.Status, err)
	}
	calls := sess.ToolCalls()
	if len(calls) != 1 {
		t.Fatalf("tools/call ran %d times, want once: %+v", len(calls), calls)
	}
	if key, _ := calls[0].Meta[mcp.MetaIdempotencyKey].(string); len(key) != 36 || len(calls[0].Meta) != 1 {
		t.Errorf("the call's _meta: %v; want one idempotency key, a UUID", calls[0].Meta)
	}
	calls[0].Meta = nil
	if d := cmp.Diff(mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "ilmek", "limit": float64(5), "page": float64(2)}}, calls[0]); d != "" {
		t.Errorf("call (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"mcp:github:search#0", "mcp:github:search#0 (replayed)"}, obs.keys); d != "" {
		t.Errorf("journal keys (-want +got):\n%s", d)
	}
	hits, _ := res.State["hits"].(map[string]any)
	if hits["text"] != "3 results\nilmek, mekik, chativa" || hits["isError"] != false || res.State["answer"] != "yes" {
		t.Errorf("state = %v", res.State)
	}
}

func TestResourceNodeReadsOnceAcrossResume(t *testing.T) {
	ctx := context.Background()
	sess := mcptest.NewSession(script(t))
	tb, _ := mcp.Connect(ctx, "github", sess)
	obs := &steps{}
	g, err := runtime.Load("g.json", graphDoc("mcp_resource_then_ask", `{"server": "github", "uri": "file:///README.md"}`),
		thenAsk(mcp.Registry(tb), "mcp_resource"), runtime.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	store := checkpoint.NewMemory()
	thread := g.Thread(store, "t-1")
	if _, err := thread.Invoke(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := thread.Resume(ctx, runtime.Answer("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if reads := sess.ResourceReads(); len(reads) != 1 {
		t.Errorf("resources/read ran %d times, want once", len(reads))
	}
	if res.State["result"] != "# README\n\nHello." {
		t.Errorf("result = %q", res.State["result"])
	}
	if d := cmp.Diff([]string{"mcp:github:resource:file:///README.md#0", "mcp:github:resource:file:///README.md#0 (replayed)"}, obs.keys); d != "" {
		t.Errorf("journal keys (-want +got):\n%s", d)
	}
}

// A transport failure is not journaled: a retry calls the server again,
// and a call that succeeded is never repeated.
func TestToolNodeRetriesFailedCallOnly(t *testing.T) {
	ctx := context.Background()
	sess := mcptest.NewSession(script(t))
	failures := 0
	sess.Fail = func(method string, p any) error {
		if method == "tools/call" && p.(*mcp.CallToolParams).Name == "get_file" && failures == 0 {
			failures++
			return errors.New("timeout")
		}
		return nil
	}
	tb, _ := mcp.Connect(ctx, "github", sess)
	reg := mcp.Registry(tb)
	tool := reg["mcp_tool"]
	reg["two_tools"] = func(n spec.Node) (runtime.NodeFunc, error) {
		search, err := tool(spec.Node{ID: n.ID, Type: "mcp_tool", Config: []byte(`{"server": "github", "tool": "github__search", "text": true, "to": "hits"}`)})
		if err != nil {
			return nil, err
		}
		file, err := tool(spec.Node{ID: n.ID, Type: "mcp_tool", Config: []byte(`{"server": "github", "tool": "github__get_file", "text": true}`)})
		if err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			a, err := search(ctx, s)
			if err != nil {
				return nil, err
			}
			b, err := file(ctx, s)
			if err != nil {
				return nil, err
			}
			a["result"] = b["result"]
			return a, nil
		}, nil
	}
	g, err := runtime.Load("g.json", graphDoc("two_tools", `{}`), reg, runtime.WithNodeRetry("n", runtime.RetryPolicy{MaxAttempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("%v, %v", res.Status, err)
	}
	var names []string
	for _, c := range sess.ToolCalls() {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "search,get_file,get_file" {
		t.Errorf("calls = %v, want search once and get_file twice", names)
	}
	if res.State["hits"] != "3 results\nilmek, mekik, chativa" || res.State["result"] != "# README" {
		t.Errorf("state = %v", res.State)
	}
}

// TestToolNodeToolError: a tool error (isError) is the result, flagged,
// without text; with text it fails the node with a *ToolError naming the
// node, the server, the tool and the tool's text, and is not journaled, so
// the next run of the thread calls the tool again.
func TestToolNodeToolError(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, config string
		wantErr      bool
	}{
		{"result", `{"server": "github", "tool": "github__internal_admin"}`, false},
		{"text", `{"server": "github", "tool": "github__internal_admin", "text": true}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sess := mcptest.NewSession(script(t))
			tb, _ := mcp.Connect(ctx, "github", sess)
			g, err := runtime.Load("g.json", graphDoc("mcp_tool", c.config), mcp.Registry(tb))
			if err != nil {
				t.Fatal(err)
			}
			thread := g.Thread(checkpoint.NewMemory(), "t")
			for run := range 2 {
				res, err := thread.Invoke(ctx, nil)
				if !c.wantErr {
					r, _ := res.State["result"].(map[string]any)
					if err != nil || r["isError"] != true || r["text"] != "permission denied" {
						t.Fatalf("run %d: result %v, err %v; want the tool error as the result, isError set", run, res.State["result"], err)
					}
					continue
				}
				var te *mcp.ToolError
				if !errors.As(err, &te) || te.Server != "github" || te.Tool != "github__internal_admin" || te.Text != "permission denied" {
					t.Fatalf("run %d: status %s, result %q, err %v; want a *ToolError", run, res.Status, res.State["result"], err)
				}
				for _, want := range []string{`mcp_tool node "n"`, `tool "github__internal_admin"`, `"permission denied"`, "drop text"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("run %d: err %q does not say %q", run, err, want)
					}
				}
				if calls := len(sess.ToolCalls()); calls != run+1 {
					t.Errorf("run %d: tools/call ran %d times, want %d: a tool error is not journaled under text", run, calls, run+1)
				}
			}
		})
	}
}

func TestNodeBuildErrors(t *testing.T) {
	ctx := context.Background()
	tb, _ := mcp.Connect(ctx, "github", mcptest.NewSession(script(t)))
	other, _ := mcp.Connect(ctx, "github", mcptest.NewSession(script(t)))
	for _, c := range []struct {
		name, typ, config, want string
		tbs                     []*mcp.Toolbox
		unknown, shape          bool
	}{
		{"unknown server", "mcp_tool", `{"server": "gitlab", "tool": "github__search"}`, `config.server: names MCP server "gitlab", which is not connected (connected: "github")`, nil, true, false},
		{"unknown tool", "mcp_tool", `{"server": "github", "tool": "search"}`, `config.tool: names tool "search", which server "github" does not expose (exposed: "github__search", "github__get_file", "github__internal_admin")`, nil, true, false},
		{"missing server", "mcp_tool", `{"tool": "github__search"}`, "config.server: is missing", nil, false, false},
		{"missing tool", "mcp_tool", `{"server": "github"}`, "config.tool: is missing", nil, false, false},
		{"empty to", "mcp_tool", `{"server": "github", "tool": "github__search", "to": ""}`, "config.to: is an empty channel name", nil, false, false},
		{"empty argumentsFrom", "mcp_tool", `{"server": "github", "tool": "github__search", "argumentsFrom": ""}`, "config.argumentsFrom: is an empty channel name", nil, false, false},
		{"two toolboxes of one name", "mcp_tool", `{"server": "github", "tool": "github__search"}`, `two connected toolboxes are named "github"`, []*mcp.Toolbox{tb, other}, false, false},
		{"arguments not an object", "mcp_tool", `{"server": "github", "tool": "github__search", "arguments": [1]}`, "config.arguments", nil, false, true},
		{"unknown key", "mcp_tool", `{"server": "github", "tool": "github__search", "txt": true}`, `"txt"`, nil, false, true},
		{"resource without uri", "mcp_resource", `{"server": "github"}`, "config.uri: is missing", nil, false, false},
		{"resource on an unknown server", "mcp_resource", `{"server": "x", "uri": "file:///a"}`, `names MCP server "x"`, nil, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tbs := c.tbs
			if tbs == nil {
				tbs = []*mcp.Toolbox{tb}
			}
			_, err := runtime.Load("g.json", graphDoc(c.typ, c.config), mcp.Registry(tbs...))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `node "n"`) {
				t.Fatalf("err = %v\nwant it to name node \"n\" and say %q", err, c.want)
			}
			// The factory's own error is typed, and matched through Load's.
			var ce *nodes.ConfigError
			var re *runtime.ConfigError
			if c.shape != errors.As(err, &re) || !c.shape && !errors.As(err, &ce) {
				t.Errorf("Load's err = %T %v", err, err)
			}
			if c.unknown != errors.Is(err, nodes.ErrUnknownName) {
				t.Errorf("errors.Is(err, nodes.ErrUnknownName) = %v, want %v", !c.unknown, c.unknown)
			}
		})
	}
}

// A channel named by argumentsFrom that holds something other than an
// object fails the node; an unset one adds nothing.
func TestArgumentsFromMustHoldAnObject(t *testing.T) {
	ctx := context.Background()
	sess := mcptest.NewSession(script(t))
	tb, _ := mcp.Connect(ctx, "github", sess)
	g, err := runtime.Load("g.json", graphDoc("mcp_tool", `{"server": "github", "tool": "github__search", "argumentsFrom": "query", "text": true}`), mcp.Registry(tb))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, runtime.Values{"query": "ilmek"}); err == nil || !strings.Contains(err.Error(), `channel "query" holds string`) {
		t.Errorf("string arguments: %v", err)
	}
	res, err := g.Invoke(ctx, nil)
	if err != nil || res.State["result"] != "3 results\nilmek, mekik, chativa" {
		t.Errorf("unset arguments: %v, %v", res.State, err)
	}
	if len(sess.ToolCalls()) != 1 {
		t.Errorf("calls = %d, want 1 (the refused one never called)", len(sess.ToolCalls()))
	}
}

// TestToolCallKeepsItsKeyAcrossALostAnswer: a tool call whose answer was
// lost (the connection dropped after the server acted) fails its run; the
// thread's next run calls the tool again under the same idempotency key,
// and a call of another step (here another thread) under another. Before,
// the call carried no key: a server could not tell the call made again
// from a new one.
func TestToolCallKeepsItsKeyAcrossALostAnswer(t *testing.T) {
	ctx := context.Background()
	sess := mcptest.NewSession(script(t))
	lost := errors.New("the connection dropped before the answer came")
	sess.Fail = func(method string, _ any) error {
		if method == "tools/call" && len(sess.ToolCalls()) == 1 {
			return lost
		}
		return nil
	}
	tb, err := mcp.Connect(ctx, "github", sess)
	if err != nil {
		t.Fatal(err)
	}
	g, err := runtime.Load("g.json", graphDoc("mcp_tool", `{"server": "github", "tool": "github__search", "arguments": {"q": "x"}, "to": "hits"}`), mcp.Registry(tb))
	if err != nil {
		t.Fatal(err)
	}
	thread := g.Thread(checkpoint.NewMemory(), "t-1")
	if _, err := thread.Invoke(ctx, nil); !errors.Is(err, lost) {
		t.Fatalf("first run: %v, want the lost answer", err)
	}
	if res, err := thread.Invoke(ctx, nil); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("second run: %v %v", res.Status, err)
	}
	if res, err := g.Thread(checkpoint.NewMemory(), "t-2").Invoke(ctx, nil); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("another thread: %v %v", res.Status, err)
	}
	var keys []string
	for _, c := range sess.ToolCalls() {
		k, _ := c.Meta[mcp.MetaIdempotencyKey].(string)
		keys = append(keys, k)
	}
	if len(keys) != 3 || keys[0] == "" || keys[1] != keys[0] || keys[2] == keys[0] {
		t.Errorf("idempotency keys of the calls: %q; want the lost call's key again, then another", keys)
	}
}
