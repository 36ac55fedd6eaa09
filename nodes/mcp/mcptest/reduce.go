package mcptest

import (
	"context"
	"errors"

	"github.com/ilmek-go/ilmek/nodes/mcp"
)

// Reduce does with session what the reference's generator does with its
// scripted server, and returns the value its expected.json holds: the
// session connected as toolbox "github" with the default prefix, "tools"
// (the exposed tools), "calls" (every exposed tool called with no
// arguments, by exposed name), "resource" (the text of the first resource
// the server lists) and "skills" (the prompts as skills). The conformance
// runner reduces a Session over the script; a module with an SDK-backed
// session reduces that one, to the same expected.json.
func Reduce(ctx context.Context, session mcp.Session) (map[string]any, error) {
	tb, err := mcp.Connect(ctx, "github", session)
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
		return nil, errors.New("mcptest: the server lists no resource to read")
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
