// Package mcptest is an MCP session scripted by a JSON file, for tests and
// for the conformance runner: the reference's server.json format, the
// answers of tools/list, tools/call (by tool name), resources/list,
// resources/read (by URI), prompts/list and prompts/get (by name). The
// session counts every call, so a test can show that a journaled call ran
// once.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/ilmek-go/ilmek/nodes/mcp"
)

// Script is a scripted server: the answer of every request it knows.
type Script struct {
	Tools            []mcp.Tool                        `json:"tools"`
	Calls            map[string]mcp.CallToolResult     `json:"calls"`
	Resources        []mcp.Resource                    `json:"resources"`
	ResourceContents map[string][]mcp.ResourceContents `json:"resourceContents"`
	Prompts          []mcp.Prompt                      `json:"prompts"`
	PromptResults    map[string]mcp.GetPromptResult    `json:"promptResults"`
}

// Parse reads a script.
func Parse(data []byte) (*Script, error) {
	var s Script
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("mcptest: the script is not a scripted MCP server: %w", err)
	}
	return &s, nil
}

// Load reads the script in file.
func Load(file string) (*Script, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Session is an mcp.Session answering from a Script.
type Session struct {
	script *Script
	// Fail, when set, is asked before every request (its method name:
	// "tools/call"...); an error it returns is the request's.
	Fail func(method string, params any) error

	mu    sync.Mutex
	calls []mcp.CallToolParams
	reads []string
	gets  []string
}

// NewSession returns a session over s.
func NewSession(s *Script) *Session { return &Session{script: s} }

var _ mcp.Session = (*Session)(nil)

// ToolCalls returns every tools/call request received, in order.
func (s *Session) ToolCalls() []mcp.CallToolParams {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mcp.CallToolParams(nil), s.calls...)
}

// ResourceReads returns the URI of every resources/read request received.
func (s *Session) ResourceReads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reads...)
}

// PromptGets returns the name of every prompts/get request received.
func (s *Session) PromptGets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gets...)
}

func (s *Session) fail(method string, params any) error {
	if s.Fail == nil {
		return nil
	}
	return s.Fail(method, params)
}

// ListTools answers with the script's tools.
func (s *Session) ListTools(context.Context) (*mcp.ListToolsResult, error) {
	if err := s.fail("tools/list", nil); err != nil {
		return nil, err
	}
	return &mcp.ListToolsResult{Tools: s.script.Tools}, nil
}

// CallTool records the call and answers with the script's result for the
// tool.
func (s *Session) CallTool(_ context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, *p)
	s.mu.Unlock()
	if err := s.fail("tools/call", p); err != nil {
		return nil, err
	}
	r, ok := s.script.Calls[p.Name]
	if !ok {
		return nil, fmt.Errorf("mcptest: unknown tool %q", p.Name)
	}
	return &r, nil
}

// ListResources answers with the script's resources.
func (s *Session) ListResources(context.Context) (*mcp.ListResourcesResult, error) {
	if err := s.fail("resources/list", nil); err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Resources: s.script.Resources}, nil
}

// ReadResource records the read and answers with the script's contents.
func (s *Session) ReadResource(_ context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	s.mu.Lock()
	s.reads = append(s.reads, p.URI)
	s.mu.Unlock()
	if err := s.fail("resources/read", p); err != nil {
		return nil, err
	}
	c, ok := s.script.ResourceContents[p.URI]
	if !ok {
		return nil, fmt.Errorf("mcptest: unknown resource %q", p.URI)
	}
	return &mcp.ReadResourceResult{Contents: c}, nil
}

// ListPrompts answers with the script's prompts.
func (s *Session) ListPrompts(context.Context) (*mcp.ListPromptsResult, error) {
	if err := s.fail("prompts/list", nil); err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Prompts: s.script.Prompts}, nil
}

// GetPrompt records the fetch and answers with the script's result.
func (s *Session) GetPrompt(_ context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	s.mu.Lock()
	s.gets = append(s.gets, p.Name)
	s.mu.Unlock()
	if err := s.fail("prompts/get", p); err != nil {
		return nil, err
	}
	r, ok := s.script.PromptResults[p.Name]
	if !ok {
		return nil, fmt.Errorf("mcptest: unknown prompt %q", p.Name)
	}
	return &r, nil
}
