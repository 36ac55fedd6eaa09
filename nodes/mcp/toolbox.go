package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
	"github.com/ilmek-go/ilmek/runtime"
)

// ExposedTool is a tool as a toolbox exposes it: under the name a model
// calls (the prefix and the server's name), with the server's own name
// beside it. InputSchema is the server's, unchanged; a tool that sent none
// gets {"type": "object"}.
type ExposedTool struct {
	Name        string          `json:"name"`
	RemoteName  string          `json:"remoteName"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Option configures Connect.
type Option func(*options)

type options struct {
	prefix   *string
	allow    map[string]bool
	allowSet bool
}

// WithPrefix sets what is put before every advertised tool name (default
// "<server>__", so tool search of server github is github__search); ""
// exposes the server's own names.
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = &prefix } }

// WithAllow keeps only the named tools (the server's names, before the
// prefix); given no names, it keeps none. Names the server does not
// advertise are ignored.
func WithAllow(names ...string) Option {
	return func(o *options) {
		o.allowSet = true
		o.allow = map[string]bool{}
		for _, n := range names {
			o.allow[n] = true
		}
	}
}

// Toolbox is one connected MCP server as a graph uses it: its tools under
// a stable prefix, listed once at Connect, and every call journaled.
type Toolbox struct {
	name   string
	prefix string
	s      Session
	tools  []ExposedTool
	byName map[string]int
}

// Connect lists the session's tools once and wraps the server under name,
// the namespace of its journal keys and its default tool prefix. A server
// that advertises one tool name twice keeps the first place and the last
// advertisement.
func Connect(ctx context.Context, name string, s Session, opts ...Option) (*Toolbox, error) {
	if name == "" {
		return nil, errors.New("mcp: a toolbox needs a server name; pass the name documents use in their mcp_tool configs")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	res, err := s.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: server %q: tools/list: %w", name, err)
	}
	tb := &Toolbox{name: name, prefix: name + "__", s: s, byName: map[string]int{}}
	if o.prefix != nil {
		tb.prefix = *o.prefix
	}
	var tools []Tool
	if res != nil {
		tools = res.Tools
	}
	for _, t := range tools {
		if o.allowSet && !o.allow[t.Name] {
			continue
		}
		et := ExposedTool{Name: tb.prefix + t.Name, RemoteName: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		if len(et.InputSchema) == 0 || string(et.InputSchema) == "null" {
			et.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if i, ok := tb.byName[et.Name]; ok {
			tb.tools[i] = et
			continue
		}
		tb.byName[et.Name] = len(tb.tools)
		tb.tools = append(tb.tools, et)
	}
	return tb, nil
}

// Name is the server's name.
func (tb *Toolbox) Name() string { return tb.name }

// Tools returns the exposed tools in the server's order, ready for a
// model's tool list.
func (tb *Toolbox) Tools() []ExposedTool {
	out := make([]ExposedTool, len(tb.tools))
	copy(out, tb.tools)
	return out
}

// Tool returns one exposed tool by its exposed name.
func (tb *Toolbox) Tool(name string) (ExposedTool, bool) {
	i, ok := tb.byName[name]
	if !ok {
		return ExposedTool{}, false
	}
	return tb.tools[i], true
}

func (tb *Toolbox) toolNames() []string {
	out := make([]string, len(tb.tools))
	for i, t := range tb.tools {
		out[i] = t.Name
	}
	return out
}

// UnknownToolError is returned for a call of a tool the toolbox does not
// expose.
type UnknownToolError struct {
	Server, Tool string
	Known        []string
}

// Error names the server, the tool and the tools it has.
func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("mcp: server %q has no tool %q (exposed: %s); call a tool by its exposed name", e.Server, e.Tool, names.List(e.Known))
}

// Invoke calls the tool exposed as name with args, unjournaled, and
// normalizes the answer. Inside a node use Call.
func (tb *Toolbox) Invoke(ctx context.Context, name string, args map[string]any) (ToolResult, error) {
	return tb.invoke(ctx, name, args, nil)
}

// invoke is Invoke with the request's _meta.
func (tb *Toolbox) invoke(ctx context.Context, name string, args, meta map[string]any) (ToolResult, error) {
	t, ok := tb.Tool(name)
	if !ok {
		return ToolResult{}, &UnknownToolError{Server: tb.name, Tool: name, Known: tb.toolNames()}
	}
	if args == nil {
		args = map[string]any{}
	}
	raw, err := tb.s.CallTool(ctx, &CallToolParams{Name: t.RemoteName, Arguments: args, Meta: meta})
	if err != nil {
		return ToolResult{}, fmt.Errorf("mcp: server %q: tools/call %q: %w", tb.name, t.RemoteName, err)
	}
	if raw == nil {
		raw = &CallToolResult{}
	}
	return NormalizeToolResult(raw), nil
}

// ToolKey is the journal key of a call of the server's tool remote:
// "mcp:<server>:<tool>", the reference's.
func ToolKey(server, remote string) string { return "mcp:" + server + ":" + remote }

// ResourceKey is the journal key of a read of resource uri:
// "mcp:<server>:resource:<uri>".
func ResourceKey(server, uri string) string { return "mcp:" + server + ":resource:" + uri }

// PromptKey is the journal key of a fetch of prompt name:
// "mcp:<server>:prompt:<name>".
func PromptKey(server, name string) string { return "mcp:" + server + ":prompt:" + name }

// Call calls the tool exposed as name once for the task, across any
// number of replays: the call runs in runtime.Step under ToolKey (the
// runtime adds #0, #1... per occurrence), and on a replay after an
// interrupt, a retry or a crash the journaled result comes back without
// calling the server. A failed call is not journaled, nor is one cut off
// by a crash before its answer was journaled, so the next attempt calls
// again, under the same idempotency key (MetaIdempotencyKey in the
// request's _meta), so that a server that keeps the keys it answered
// answers it once. A tool error (IsError) is a result like any other,
// journaled; mcp_tool with text fails on it instead.
func (tb *Toolbox) Call(ctx *runtime.Ctx, name string, args map[string]any) (ToolResult, error) {
	return tb.call(ctx, name, args, false)
}

// call is Call; with failToolError, a result the server flagged as an
// error is a *ToolError, not journaled, so that a later pass calls again.
func (tb *Toolbox) call(ctx *runtime.Ctx, name string, args map[string]any, failToolError bool) (ToolResult, error) {
	t, ok := tb.Tool(name)
	if !ok {
		return ToolResult{}, &UnknownToolError{Server: tb.name, Tool: name, Known: tb.toolNames()}
	}
	return runtime.Step(ctx, ToolKey(tb.name, t.RemoteName), func() (ToolResult, error) {
		key, err := ctx.StepID()
		if err != nil {
			return ToolResult{}, err
		}
		r, err := tb.invoke(ctx, name, args, map[string]any{MetaIdempotencyKey: key})
		if err == nil && failToolError && r.IsError {
			return r, &ToolError{Server: tb.name, Tool: name, Text: r.Text}
		}
		return r, err
	})
}

// ToolError is a tool result the server flagged as an error (isError)
// where the caller wanted its text alone (mcp_tool with text): the
// server, the tool (its exposed name) and the result's text, the tool's
// reason.
type ToolError struct {
	Server, Tool string
	Text         string
}

// Error names the server, the tool and its reason.
func (e *ToolError) Error() string {
	reason := "with no text"
	if e.Text != "" {
		reason = strconv.Quote(e.Text)
	}
	return fmt.Sprintf("mcp: server %q: tool %q answered with an error (isError): %s", e.Server, e.Tool, reason)
}

// Resources lists the server's resources; none when it offers none.
func (tb *Toolbox) Resources(ctx context.Context) ([]Resource, error) {
	res, err := tb.s.ListResources(ctx)
	if errors.Is(err, ErrNotSupported) {
		return []Resource{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("mcp: server %q: resources/list: %w", tb.name, err)
	}
	if res == nil || res.Resources == nil {
		return []Resource{}, nil
	}
	return res.Resources, nil
}

// FetchResource reads resource uri, unjournaled: the text of its contents,
// empty ones left out, joined with "\n" (a binary resource reads as "").
func (tb *Toolbox) FetchResource(ctx context.Context, uri string) (string, error) {
	res, err := tb.s.ReadResource(ctx, &ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("mcp: server %q: resources/read %q: %w", tb.name, uri, err)
	}
	if res == nil {
		return "", nil
	}
	var texts []string
	for _, c := range res.Contents {
		if c.Text != "" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// ReadResource reads resource uri once for the task, journaled under
// ResourceKey.
func (tb *Toolbox) ReadResource(ctx *runtime.Ctx, uri string) (string, error) {
	return runtime.Step(ctx, ResourceKey(tb.name, uri), func() (string, error) {
		return tb.FetchResource(ctx, uri)
	})
}

// Prompts lists the server's prompts; none when it offers none.
func (tb *Toolbox) Prompts(ctx context.Context) ([]Prompt, error) {
	res, err := tb.s.ListPrompts(ctx)
	if errors.Is(err, ErrNotSupported) {
		return []Prompt{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("mcp: server %q: prompts/list: %w", tb.name, err)
	}
	if res == nil || res.Prompts == nil {
		return []Prompt{}, nil
	}
	return res.Prompts, nil
}

// FetchPrompt gets prompt name with args, unjournaled, as text
// ([PromptText]).
func (tb *Toolbox) FetchPrompt(ctx context.Context, name string, args map[string]string) (string, error) {
	res, err := tb.s.GetPrompt(ctx, &GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("mcp: server %q: prompts/get %q: %w", tb.name, name, err)
	}
	if res == nil {
		return "", nil
	}
	return PromptText(res), nil
}

// Prompt gets prompt name once for the task, journaled under PromptKey.
func (tb *Toolbox) Prompt(ctx *runtime.Ctx, name string, args map[string]string) (string, error) {
	return runtime.Step(ctx, PromptKey(tb.name, name), func() (string, error) {
		return tb.FetchPrompt(ctx, name, args)
	})
}
