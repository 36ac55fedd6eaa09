package mcpsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/internal/canonjson"
	"github.com/ilmek-go/ilmek/mcpsdk"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

const upstream = "../conformance/testdata/upstream/mcp/"

// remarshal reads src's JSON into a new T.
func remarshal[T any](t *testing.T, src any) *T {
	t.Helper()
	data, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return out
}

// scriptedServer is a real SDK server answering as server.json says, with
// one adaptation: a prompt message whose content is a list of blocks (the
// protocol has one block per message) becomes one message per text block,
// which renders to the same text (the list's image, whose data "x" is not
// base64, is one the SDK refuses, and adds no text).
func scriptedServer(t *testing.T, s *mcptest.Script) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "scripted", Version: "1.0.0"}, nil)
	for _, tool := range s.Tools {
		res := remarshal[sdk.CallToolResult](t, s.Calls[tool.Name])
		srv.AddTool(&sdk.Tool{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return res, nil })
	}
	for _, r := range s.Resources {
		contents := s.ResourceContents[r.URI]
		srv.AddResource(remarshal[sdk.Resource](t, r), func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return remarshal[sdk.ReadResourceResult](t, mcp.ReadResourceResult{Contents: contents}), nil
		})
	}
	for _, p := range s.Prompts {
		result, ok := s.PromptResults[p.Name]
		var msgs []mcp.PromptMessage
		for _, m := range result.Messages {
			if c := bytes.TrimSpace(m.Content); len(c) > 0 && c[0] == '[' {
				var blocks []json.RawMessage
				if err := json.Unmarshal(c, &blocks); err != nil {
					t.Fatal(err)
				}
				for _, b := range blocks {
					var blk struct{ Type string }
					if json.Unmarshal(b, &blk) == nil && blk.Type == "text" {
						msgs = append(msgs, mcp.PromptMessage{Role: m.Role, Content: b})
					}
				}
				continue
			}
			msgs = append(msgs, m)
		}
		res := remarshal[sdk.GetPromptResult](t, mcp.GetPromptResult{Messages: msgs})
		srv.AddPrompt(remarshal[sdk.Prompt](t, p), func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			if !ok {
				return nil, errors.New("this prompt is fetched per use")
			}
			return res, nil
		})
	}
	return srv
}

// connect serves srv over in-memory transports and returns the client's
// session, adapted.
func connect(t *testing.T, srv *sdk.Server) *mcpsdk.Session {
	t.Helper()
	return mcpsdk.NewSession(clientOf(t, srv))
}

// clientOf serves srv over in-memory transports and returns the client's
// session.
func clientOf(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ilmek-test", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The reference's MCP data, served by a real SDK server and read through a
// real SDK client, reduce byte for byte to expected.json.
func TestUpstreamThroughSDK(t *testing.T) {
	script, err := mcptest.Load(upstream + "server.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := mcptest.Reduce(context.Background(), connect(t, scriptedServer(t, script)))
	if err != nil {
		t.Fatal(err)
	}
	// An SDK server lists its tools sorted by name, not in the order they
	// were added; the toolbox keeps the server's order, so put the list back
	// in the script's order before comparing.
	order := map[string]int{}
	for i, tool := range script.Tools {
		order["github__"+tool.Name] = i
	}
	tools := got["tools"].([]mcp.ExposedTool)
	slices.SortFunc(tools, func(a, b mcp.ExposedTool) int { return order[a.Name] - order[b.Name] })
	gotJSON, err := canonjson.Of(got)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readCanonical(upstream + "expected.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotJSON, want) {
		t.Errorf("got\n%s\nwant\n%s", gotJSON, want)
	}
}

func readCanonical(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return canonjson.Canonical(data)
}

// askNode pauses for a person.
func askNode(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
	ans, err := runtime.Interrupt[string](ctx, "go on?")
	if err != nil {
		return nil, err
	}
	return runtime.Values{"answer": ans}, nil
}

// A tool node over an SDK session calls the server once across an
// interrupt and a resume.
func TestToolNodeOnceThroughSDK(t *testing.T) {
	ctx := context.Background()
	calls := 0
	srv := sdk.NewServer(&sdk.Implementation{Name: "counting", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			calls++
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found " + string(req.Params.Arguments)}}}, nil
		})
	gh, err := mcp.Connect(ctx, "github", connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	reg := mcp.Registry(gh)
	reg["ask"] = func(spec.Node) (runtime.NodeFunc, error) { return askNode, nil }
	g, err := runtime.Load("g.json", []byte(`{"name": "g", "channels": {"hits": {}, "answer": {}},
  "nodes": [{"id": "search", "type": "mcp_tool", "config": {"server": "github", "tool": "github__search", "arguments": {"q": "ilmek"}, "to": "hits", "text": true}},
            {"id": "ask", "type": "ask"}],
  "edges": [{"from": "__start__", "to": "search"}, {"from": "search", "to": "ask"}, {"from": "ask", "to": "__end__"}]}`), reg)
	if err != nil {
		t.Fatal(err)
	}
	th := g.Thread(checkpoint.NewMemory(), "t")
	if res, err := th.Invoke(ctx, nil); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("%v, %v", res.Status, err)
	}
	res, err := th.Resume(ctx, runtime.Answer("ok"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("%v, %v", res.Status, err)
	}
	if calls != 1 || res.State["hits"] != `found {"q":"ilmek"}` {
		t.Errorf("calls = %d, hits = %v", calls, res.State["hits"])
	}
}

// A server without resources or prompts lists none.
func TestNoResourcesNoPrompts(t *testing.T) {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "tools-only", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	tb, err := mcp.Connect(ctx, "s", connect(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := tb.Resources(ctx); err != nil || len(r) != 0 {
		t.Errorf("Resources = %v, %v", r, err)
	}
	if p, err := mcp.Skills(ctx, tb, mcp.SkillsOptions{}); err != nil || len(p) != 0 {
		t.Errorf("Skills = %v, %v", p, err)
	}
	if _, err := tb.Invoke(ctx, "s__t", nil); err != nil {
		t.Errorf("Invoke: %v", err)
	}
	if _, err := tb.FetchResource(ctx, "file:///x"); !errors.Is(err, mcp.ErrNotSupported) || !strings.Contains(err.Error(), `server "s"`) {
		t.Errorf("FetchResource: %v", err)
	}
}

// A server that goes away, or does not answer in time, fails the call with
// an error naming the server and the tool; nothing is journaled, so the
// task's next attempt calls again.
func TestDisconnectAndTimeout(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	srv := sdk.NewServer(&sdk.Implementation{Name: "flaky", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ilmek-test", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tb, err := mcp.Connect(ctx, "flaky", mcpsdk.NewSession(cs))
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = tb.Invoke(tctx, "flaky__slow", nil)
	if err == nil || !strings.Contains(err.Error(), `mcp: server "flaky": tools/call "slow"`) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v, want a deadline error naming the server and the tool", err)
	}
	close(release)
	ss.Close()
	_, err = tb.Invoke(ctx, "flaky__slow", nil)
	if err == nil || !strings.Contains(err.Error(), `mcp: server "flaky": tools/call "slow"`) {
		t.Errorf("disconnected: err = %v, want an error naming the server and the tool", err)
	}
}
