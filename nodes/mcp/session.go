package mcp

import (
	"context"
	"encoding/json"
	"errors"
)

// Session is a connected MCP client session, as the toolbox uses it: the
// six requests of the protocol it makes, on the protocol's JSON shapes. A
// session over the official SDK (a module of its own), a session scripted
// by a test ([mcptest]) or one of the application's own all fit. A list
// call returns every item, following the server's pagination cursors
// itself. A server that does not offer resources or prompts answers those
// calls with an error matching ErrNotSupported.
//
// [mcptest]: https://pkg.go.dev/github.com/ilmek-go/ilmek/nodes/mcp/mcptest
type Session interface {
	// ListTools is tools/list.
	ListTools(ctx context.Context) (*ListToolsResult, error)
	// CallTool is tools/call.
	CallTool(ctx context.Context, params *CallToolParams) (*CallToolResult, error)
	// ListResources is resources/list.
	ListResources(ctx context.Context) (*ListResourcesResult, error)
	// ReadResource is resources/read.
	ReadResource(ctx context.Context, params *ReadResourceParams) (*ReadResourceResult, error)
	// ListPrompts is prompts/list.
	ListPrompts(ctx context.Context) (*ListPromptsResult, error)
	// GetPrompt is prompts/get.
	GetPrompt(ctx context.Context, params *GetPromptParams) (*GetPromptResult, error)
}

// ErrNotSupported is matched by the error of a Session call the server
// does not offer (no resources, no prompts); the toolbox then lists none.
var ErrNotSupported = errors.New("mcp: the server does not offer this capability")

// Tool is one tool a server advertises (tools/list). InputSchema is its
// JSON Schema, kept byte for byte.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// ListToolsResult is the answer of tools/list.
type ListToolsResult struct {
	Tools []Tool `json:"tools"`
}

// CallToolParams is the request of tools/call: the server's own tool name,
// the arguments, and the request's metadata (MCP's _meta; Toolbox.Call
// puts its idempotency key there, MetaIdempotencyKey).
type CallToolParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// MetaIdempotencyKey is the _meta key under which Toolbox.Call sends its
// call's idempotency key: the step's runtime.Ctx.StepID, the same on every
// attempt of the call (a retry, a resume, the run after a crash or a
// dropped connection) and different for every other call. A server whose
// tool has an effect that must not repeat keeps the keys it answered and
// answers a key again with that answer; mcpsdk.AddGraph does. It is a key
// of MCP's own form for _meta (a prefix of its own, then a name), which a
// server that does not know it ignores.
const MetaIdempotencyKey = "ilmek/idempotency-key"

// CallToolResult is the answer of tools/call. Content holds the raw content
// blocks ({"type": "text", "text": ...}, images, embedded resources...);
// StructuredContent is nil when the server sent none.
type CallToolResult struct {
	Content           []json.RawMessage `json:"content,omitempty"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// Resource is one resource a server lists (resources/list).
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ListResourcesResult is the answer of resources/list.
type ListResourcesResult struct {
	Resources []Resource `json:"resources"`
}

// ReadResourceParams is the request of resources/read.
type ReadResourceParams struct {
	URI string `json:"uri"`
}

// ResourceContents is one part of a read resource: text, or a base64 blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// ReadResourceResult is the answer of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt is one prompt a server lists (prompts/list).
type Prompt struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// ListPromptsResult is the answer of prompts/list.
type ListPromptsResult struct {
	Prompts []Prompt `json:"prompts"`
}

// GetPromptParams is the request of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// PromptMessage is one message of a prompt; Content is one content block
// or a list of them, raw.
type PromptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// GetPromptResult is the answer of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}
