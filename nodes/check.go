package nodes

import (
	"encoding/json"

	"github.com/ilmek-go/ilmek/spec"
)

// channelKey is a config key of a built-in node type that names a channel,
// with the channel used when the key is absent ("" when nothing is).
type channelKey struct {
	key, def string
	writes   bool
}

// channelKeys lists, per built-in node type, the config keys that name
// channels.
var channelKeys = map[string][]channelKey{
	"mcp_tool":     {{"argumentsFrom", "", false}, {"to", "result", true}},
	"mcp_resource": {{"to", "result", true}},
	"a2a_call":     {{"textFrom", "", false}, {"contextFrom", "", false}, {"taskFrom", "", false}, {"to", "result", true}},
	"skill":        {{"to", "instructions", true}},
	"skills":       {{"to", "instructions", true}},
}

// Check reports, with positions, every node of a built-in type in doc
// whose config names a channel the document does not declare: the channel
// it writes ("to", or the type's default channel when "to" is absent) and
// the channels it reads (argumentsFrom, textFrom, contextFrom, taskFrom),
// and every one of those keys given as an empty name, which the factory
// refuses when the graph is built.
// A factory sees one node and cannot know the document's channels, so an
// application (or a tool checking documents) calls Check beside
// spec.Decode; a node writing an undeclared channel would otherwise fail
// only when it runs. Configs that are not objects, and keys that are not
// strings, are left to the factories.
func Check(doc *spec.Graph) spec.Diagnostics {
	var out spec.Diagnostics
	for i, n := range doc.Nodes {
		keys, ok := channelKeys[n.Type]
		if !ok {
			continue
		}
		var cfg map[string]json.RawMessage
		if len(n.Config) > 0 && json.Unmarshal(n.Config, &cfg) != nil {
			continue
		}
		nodePath := spec.PathIndex("nodes", i)
		cfgPath := spec.PathKey(nodePath, "config")
		for _, k := range keys {
			raw, present := cfg[k.key]
			name, path := k.def, spec.PathKey(cfgPath, k.key)
			if present && string(raw) != "null" {
				if json.Unmarshal(raw, &name) != nil {
					continue // not a string: the factory's to refuse
				}
				if name == "" {
					// The factory refuses it when the graph is built; a
					// generated package would fail only then.
					d := spec.Diagnostic{Severity: spec.SeverityError, Pos: doc.Pos(path), Path: path,
						Message: "node " + quote(n.ID) + ": " + quote(k.key) + " is an empty channel name",
						Hint:    "name a declared channel, or leave " + quote(k.key) + " out"}
					if k.def != "" {
						d.Hint += " to write " + quote(k.def)
					}
					out = append(out, d)
					continue
				}
			} else {
				path = spec.PathKey(nodePath, "type")
				if len(n.Config) > 0 {
					path = cfgPath
				}
			}
			if name == "" {
				continue
			}
			if _, ok := doc.Channel(name); ok {
				continue
			}
			d := spec.Diagnostic{Severity: spec.SeverityError, Pos: doc.Pos(path), Path: path}
			switch {
			case present && k.writes:
				d.Message = "node " + quote(n.ID) + " writes channel " + quote(name) + ", which the document does not declare"
				d.Hint = "declare the channel or name a declared one in " + quote(k.key)
			case present:
				d.Message = "node " + quote(n.ID) + " reads channel " + quote(name) + " (" + k.key + "), which the document does not declare"
				d.Hint = "declare the channel or name a declared one"
			default:
				d.Message = "node " + quote(n.ID) + " (type " + quote(n.Type) + ") writes channel " + quote(name) + " by default, which the document does not declare"
				d.Hint = "declare channel " + quote(name) + ", or set " + quote(k.key) + " to a declared channel"
			}
			out = append(out, d)
		}
	}
	return out
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
