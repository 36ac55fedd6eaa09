package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ilmek-go/ilmek/internal/canonjson"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/nodes/skills"
)

// The upstream families: the reference's shared data for its MCP, A2A and
// skills packages (testdata/upstream), each a folder with an expected.json
// that every port reduces the folder's input to.
const (
	UpstreamMCP    = "mcp"
	UpstreamA2A    = "a2a"
	UpstreamSkills = "skills"
)

// UpstreamCase is one folder of the reference's shared data.
type UpstreamCase struct {
	// Dir is the folder; Family is UpstreamMCP, UpstreamA2A or
	// UpstreamSkills.
	Dir, Family string
}

// UpstreamFamily says which upstream family the folder dir holds, by its
// layout, or "" for none: an expected.json beside a server.json (a
// scripted MCP server), beside an agent.json (a scripted A2A agent), or
// beside sub-folders holding a SKILL.md (skill folders).
func UpstreamFamily(dir string) string {
	if !exists(filepath.Join(dir, "expected.json")) {
		return ""
	}
	switch {
	case exists(filepath.Join(dir, "server.json")):
		return UpstreamMCP
	case exists(filepath.Join(dir, "agent.json")):
		return UpstreamA2A
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), skills.File)) {
			return UpstreamSkills
		}
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// LoadUpstreamDir returns the upstream case dir is, or, when it is none,
// those its immediate sub-folders are (so the folder holding all three
// families runs them all).
func LoadUpstreamDir(dir string) ([]*UpstreamCase, error) {
	if f := UpstreamFamily(dir); f != "" {
		return []*UpstreamCase{{Dir: dir, Family: f}}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*UpstreamCase
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		if f := UpstreamFamily(sub); e.IsDir() && f != "" {
			out = append(out, &UpstreamCase{Dir: sub, Family: f})
		}
	}
	return out, nil
}

// Want returns the canonical form of the case's expected.json.
func (c *UpstreamCase) Want() ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(c.Dir, "expected.json"))
	if err != nil {
		return nil, err
	}
	return canonjson.Canonical(data)
}

// Reduce runs the case's input through this project's packages as the
// reference's generator does, and returns the canonical form of the result.
func (c *UpstreamCase) Reduce(ctx context.Context) ([]byte, error) {
	var v any
	var err error
	switch c.Family {
	case UpstreamMCP:
		v, err = reduceMCP(ctx, c.Dir)
	case UpstreamA2A:
		v, err = reduceA2A(ctx, c.Dir)
	case UpstreamSkills:
		v, err = reduceSkills(c.Dir)
	default:
		err = fmt.Errorf("unknown upstream family %q", c.Family)
	}
	if err != nil {
		return nil, err
	}
	return canonjson.Of(v)
}

// reduceMCP connects a session scripted by server.json as toolbox github
// (default prefix), calls every exposed tool with no arguments, reads the
// first resource the server lists and turns the prompts into skills.
func reduceMCP(ctx context.Context, dir string) (any, error) {
	script, err := mcptest.Load(filepath.Join(dir, "server.json"))
	if err != nil {
		return nil, err
	}
	tb, err := mcp.Connect(ctx, "github", mcptest.NewSession(script))
	if err != nil {
		return nil, err
	}
	calls := map[string]mcp.ToolResult{}
	for _, t := range tb.Tools() {
		if calls[t.Name], err = tb.Invoke(ctx, t.Name, nil); err != nil {
			return nil, err
		}
	}
	res, err := tb.Resources(ctx)
	if err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, errors.New("server.json lists no resource to read")
	}
	text, err := tb.FetchResource(ctx, res[0].URI)
	if err != nil {
		return nil, err
	}
	sk, err := mcp.Skills(ctx, tb, mcp.SkillsOptions{})
	if err != nil {
		return nil, err
	}
	return map[string]any{"tools": tb.Tools(), "calls": calls, "resource": text, "skills": sk}, nil
}

// reduceA2A connects an agent over a transport scripted by agent.json,
// sends every scripted text (the results without the task itself), and
// asks for a task no send returns, for the scripted JSON-RPC error.
func reduceA2A(ctx context.Context, dir string) (any, error) {
	script, err := a2atest.Load(filepath.Join(dir, "agent.json"))
	if err != nil {
		return nil, err
	}
	agent, err := a2a.Connect(ctx, a2atest.NewTransport(script), a2a.WithMessageIDs(func() string { return "m-x" }))
	if err != nil {
		return nil, err
	}
	results := map[string]a2a.Result{}
	for _, text := range script.Texts {
		r, err := agent.Invoke(ctx, text, a2a.SendOptions{})
		if err != nil {
			return nil, err
		}
		r.Task = nil
		results[text] = r
	}
	out := map[string]any{"name": agent.Name(), "results": results}
	_, err = agent.GetTask(ctx, "task-nope")
	var rpc *a2a.RPCError
	if !errors.As(err, &rpc) {
		return nil, fmt.Errorf("tasks/get of an unknown task: want a JSON-RPC error, got %v", err)
	}
	out["error"] = map[string]any{"code": rpc.Code, "message": rpc.Message}
	return out, nil
}

// reduceSkills discovers the skill folders of dir and renders the catalog
// prompt with the default intro.
func reduceSkills(dir string) (any, error) {
	cat, err := skills.FromDirs(skills.LoadOptions{}, dir)
	if err != nil {
		return nil, err
	}
	return map[string]any{"skills": cat.All(), "prompt": skills.RenderPrompt(cat.List(), skills.DefaultIntro)}, nil
}

// RunUpstream reduces every case, compares it with its expected.json in
// canonical form, prints one line per case (ok, or FAIL with both forms)
// and returns the counts.
func RunUpstream(ctx context.Context, w io.Writer, cases []*UpstreamCase) Report {
	var rep Report
	for _, c := range cases {
		label := "upstream/" + c.Family
		got, err := c.Reduce(ctx)
		var want []byte
		if err == nil {
			want, err = c.Want()
		}
		if err == nil && bytes.Equal(got, want) {
			rep.Passed++
			fmt.Fprintf(w, "ok   %-18s %s\n", label, c.Dir)
			continue
		}
		rep.Failed++
		fmt.Fprintf(w, "FAIL %-18s %s\n", label, c.Dir)
		if err != nil {
			fmt.Fprintf(w, "     error: %v\n", err)
			continue
		}
		fmt.Fprintf(w, "     got  %s\n     want %s\n", got, want)
	}
	return rep
}
