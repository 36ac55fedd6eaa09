package mcp

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
	"github.com/ilmek-go/ilmek/nodes/internal/nodecfg"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// DefaultChannel is the channel the mcp_tool and mcp_resource node types
// write when their config names none.
const DefaultChannel = "result"

// ToolConfig is the config of an "mcp_tool" node: it calls Tool (the
// exposed name, "github__search") on the toolbox named Server with
// Arguments, over which the object in channel ArgumentsFrom is merged when
// that channel is set, journaled under "mcp:<server>:<tool>", and writes
// channel To (default "result"): the whole [ToolResult], or its text alone
// when Text is set. A tool error (the server's isError) is a ToolResult
// like any other, IsError set; with Text, which has no room for the flag,
// it fails the node with a *[ToolError] instead, not journaled, so a retry
// or a later run calls the tool again.
//
//	{ "id": "search", "type": "mcp_tool",
//	  "config": { "server": "github", "tool": "github__search", "argumentsFrom": "query", "to": "hits", "text": true } }
type ToolConfig struct {
	Server        string         `json:"server"`
	Tool          string         `json:"tool"`
	Arguments     map[string]any `json:"arguments,omitempty"`
	ArgumentsFrom string         `json:"argumentsFrom,omitempty"`
	To            string         `json:"to,omitempty"`
	Text          bool           `json:"text,omitempty"`
}

// ResourceConfig is the config of an "mcp_resource" node: it reads
// resource URI on the toolbox named Server, journaled under
// "mcp:<server>:resource:<uri>", and writes its text to channel To
// (default "result").
type ResourceConfig struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
	To     string `json:"to,omitempty"`
}

// Registry returns the "mcp_tool" and "mcp_resource" node types over
// toolboxes, keyed by their names, for an application to add to its
// registry. Names are resolved when the graph is built: an unknown server
// or tool, a missing uri, an empty channel name, or two toolboxes of one
// name is a *nodes.ConfigError naming the node.
func Registry(toolboxes ...*Toolbox) runtime.Registry {
	return runtime.Registry{"mcp_tool": ToolFactory(toolboxes...), "mcp_resource": ResourceFactory(toolboxes...)}
}

type toolboxes struct {
	by  map[string]*Toolbox
	dup string
}

func index(tbs []*Toolbox) toolboxes {
	x := toolboxes{by: map[string]*Toolbox{}}
	for _, tb := range tbs {
		if _, ok := x.by[tb.name]; ok && x.dup == "" {
			x.dup = tb.name
		}
		x.by[tb.name] = tb
	}
	return x
}

func (x toolboxes) resolve(c *nodecfg.Config, server string) (*Toolbox, error) {
	if err := c.Required("server", server, "the name of a connected MCP server"); err != nil {
		return nil, err
	}
	if x.dup != "" {
		return nil, c.Err("server", fmt.Sprintf("two connected toolboxes are named %q", x.dup), "give every toolbox its own name")
	}
	tb, ok := x.by[server]
	if !ok {
		known := slices.Sorted(maps.Keys(x.by))
		return nil, c.Unknown("server", "names MCP server "+names.Quote(server)+", which is not connected (connected: "+names.List(known)+")", "connect a toolbox of that name or fix the name")
	}
	return tb, nil
}

// ToolFactory builds "mcp_tool" nodes over toolboxes.
func ToolFactory(tbs ...*Toolbox) runtime.Factory {
	x := index(tbs)
	return func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg ToolConfig
		c, err := nodecfg.Decode(n, &cfg)
		if err != nil {
			return nil, err
		}
		tb, err := x.resolve(c, cfg.Server)
		if err != nil {
			return nil, err
		}
		if err := c.Required("tool", cfg.Tool, "the exposed name of one of the server's tools"); err != nil {
			return nil, err
		}
		if _, ok := tb.Tool(cfg.Tool); !ok {
			return nil, c.Unknown("tool", "names tool "+names.Quote(cfg.Tool)+", which server "+names.Quote(tb.name)+" does not expose (exposed: "+names.List(tb.toolNames())+")", "name a tool by its exposed name (\"<server>__<tool>\" by default)")
		}
		if err := c.OptionalChannel("argumentsFrom", cfg.ArgumentsFrom); err != nil {
			return nil, err
		}
		to, err := c.Channel("to", cfg.To, DefaultChannel)
		if err != nil {
			return nil, err
		}
		fixed, from, textOnly, tool := cfg.Arguments, cfg.ArgumentsFrom, cfg.Text, cfg.Tool
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			args := make(map[string]any, len(fixed))
			maps.Copy(args, fixed)
			if from != "" {
				switch v := s[from].(type) {
				case nil:
				case map[string]any:
					maps.Copy(args, v)
				default:
					return nil, fmt.Errorf("mcp_tool node %q: channel %q holds %T, not an object of arguments; write an object there or drop argumentsFrom", n.ID, from, v)
				}
			}
			res, err := tb.call(ctx, tool, args, textOnly)
			if te := (*ToolError)(nil); errors.As(err, &te) {
				return nil, fmt.Errorf("mcp_tool node %q: %w; with text the node fails, and the call is not journaled: a retry or a later run calls the tool again (drop text to write the result, isError included)", n.ID, err)
			}
			if err != nil {
				return nil, err
			}
			if textOnly {
				return runtime.Values{to: res.Text}, nil
			}
			return runtime.Values{to: res}, nil
		}, nil
	}
}

// ResourceFactory builds "mcp_resource" nodes over toolboxes.
func ResourceFactory(tbs ...*Toolbox) runtime.Factory {
	x := index(tbs)
	return func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg ResourceConfig
		c, err := nodecfg.Decode(n, &cfg)
		if err != nil {
			return nil, err
		}
		tb, err := x.resolve(c, cfg.Server)
		if err != nil {
			return nil, err
		}
		if err := c.Required("uri", cfg.URI, "the URI of one of the server's resources"); err != nil {
			return nil, err
		}
		to, err := c.Channel("to", cfg.To, DefaultChannel)
		if err != nil {
			return nil, err
		}
		uri := cfg.URI
		return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			text, err := tb.ReadResource(ctx, uri)
			if err != nil {
				return nil, err
			}
			return runtime.Values{to: text}, nil
		}, nil
	}
}
