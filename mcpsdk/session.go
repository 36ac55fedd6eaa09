package mcpsdk

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/nodes/mcp"
)

// Session is an mcp.Session over an SDK client session.
type Session struct {
	cs *sdk.ClientSession
}

// NewSession adapts cs. The SDK's values are carried over in their JSON
// form, so a content block reaches the toolbox as the server sent it.
func NewSession(cs *sdk.ClientSession) *Session { return &Session{cs: cs} }

var _ mcp.Session = (*Session)(nil)

// convert re-reads an SDK value as the ilmek shape of the same JSON.
func convert[T any](v any, what string) (*T, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mcpsdk: encode the %s: %w", what, err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("mcpsdk: the %s does not read as MCP JSON: %w", what, err)
	}
	return out, nil
}

// supports reports whether the server announced the capability cap
// ("resources", "prompts") when the session was initialized.
func (s *Session) supports(capability string) bool {
	r := s.cs.InitializeResult()
	if r == nil || r.Capabilities == nil {
		return false
	}
	switch capability {
	case "resources":
		return r.Capabilities.Resources != nil
	case "prompts":
		return r.Capabilities.Prompts != nil
	}
	return true
}

// ListTools lists every tool, following the server's pages.
func (s *Session) ListTools(ctx context.Context) (*mcp.ListToolsResult, error) {
	out := &mcp.ListToolsResult{Tools: []mcp.Tool{}}
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tool, err := convert[mcp.Tool](t, "tool "+t.Name)
		if err != nil {
			return nil, err
		}
		out.Tools = append(out.Tools, *tool)
	}
	return out, nil
}

// CallTool calls a tool.
func (s *Session) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	args := p.Arguments
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Meta: p.Meta, Name: p.Name, Arguments: args})
	if err != nil {
		return nil, err
	}
	return convert[mcp.CallToolResult](res, "result of tool "+p.Name)
}

// ListResources lists every resource, following the server's pages; a
// server without resources answers mcp.ErrNotSupported.
func (s *Session) ListResources(ctx context.Context) (*mcp.ListResourcesResult, error) {
	if !s.supports("resources") {
		return nil, mcp.ErrNotSupported
	}
	out := &mcp.ListResourcesResult{Resources: []mcp.Resource{}}
	for r, err := range s.cs.Resources(ctx, nil) {
		if err != nil {
			return nil, err
		}
		res, err := convert[mcp.Resource](r, "resource "+r.URI)
		if err != nil {
			return nil, err
		}
		out.Resources = append(out.Resources, *res)
	}
	return out, nil
}

// ReadResource reads a resource; a server without resources answers
// mcp.ErrNotSupported.
func (s *Session) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if !s.supports("resources") {
		return nil, mcp.ErrNotSupported
	}
	res, err := s.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: p.URI})
	if err != nil {
		return nil, err
	}
	return convert[mcp.ReadResourceResult](res, "contents of resource "+p.URI)
}

// ListPrompts lists every prompt, following the server's pages; a server
// without prompts answers mcp.ErrNotSupported.
func (s *Session) ListPrompts(ctx context.Context) (*mcp.ListPromptsResult, error) {
	if !s.supports("prompts") {
		return nil, mcp.ErrNotSupported
	}
	out := &mcp.ListPromptsResult{Prompts: []mcp.Prompt{}}
	for p, err := range s.cs.Prompts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		pr, err := convert[mcp.Prompt](p, "prompt "+p.Name)
		if err != nil {
			return nil, err
		}
		out.Prompts = append(out.Prompts, *pr)
	}
	return out, nil
}

// GetPrompt gets a prompt; a server without prompts answers
// mcp.ErrNotSupported.
func (s *Session) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if !s.supports("prompts") {
		return nil, mcp.ErrNotSupported
	}
	res, err := s.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: p.Arguments})
	if err != nil {
		return nil, err
	}
	return convert[mcp.GetPromptResult](res, "prompt "+p.Name)
}
