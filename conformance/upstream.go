package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ilmek-go/ilmek/internal/canonjson"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
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

// reduceMCP reduces a session scripted by server.json (mcptest.Reduce).
func reduceMCP(ctx context.Context, dir string) (any, error) {
	script, err := mcptest.Load(filepath.Join(dir, "server.json"))
	if err != nil {
		return nil, err
	}
	return mcptest.Reduce(ctx, mcptest.NewSession(script))
}

// reduceA2A reduces a transport scripted by agent.json, sending every
// scripted text in the file's order (a2atest.Reduce).
func reduceA2A(ctx context.Context, dir string) (any, error) {
	script, err := a2atest.Load(filepath.Join(dir, "agent.json"))
	if err != nil {
		return nil, err
	}
	return a2atest.Reduce(ctx, a2atest.NewTransport(script), script.Texts)
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
