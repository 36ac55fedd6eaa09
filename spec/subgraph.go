package spec

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// SubgraphType is the node type of a subgraph node: a node that runs
// another graph, named by its document's name, to its end. The runtime
// provides it (runtime.WithSubgraphs); its config is
//
//	{"graph": NAME, "fingerprint"?: FINGERPRINT,
//	 "in"?: {CHILD_CHANNEL: PARENT_CHANNEL, ...},
//	 "out"?: {PARENT_CHANNEL: CHILD_CHANNEL, ...}}
//
// Validate checks that shape: an object holding a non-empty string graph,
// a string fingerprint, and in and out objects of non-empty channel names,
// nothing else. Whether the channels and the child exist is the builder's
// to check, since it alone knows the child (runtime.CheckSubgraphs).
const SubgraphType = "subgraph"

// subgraphKeys are the members of a subgraph node's config.
var subgraphKeys = []string{"graph", "fingerprint", "in", "out"}

// subgraphs checks the config of every subgraph node.
func (c *checker) subgraphs() {
	for i, n := range c.g.Nodes {
		if n.Type != SubgraphType {
			continue
		}
		node := PathIndex("nodes", i)
		cfgPath := PathKey(node, "config")
		hint := `write {"graph": "<child document name>", "in": {...}, "out": {...}}`
		var cfg map[string]json.RawMessage
		if len(n.Config) == 0 || string(n.Config) == "null" || json.Unmarshal(n.Config, &cfg) != nil {
			path := cfgPath
			if len(n.Config) == 0 {
				path = PathKey(node, "type")
			}
			c.errorf(path, hint, "node %s is a subgraph node and needs a config object naming its graph", quote(n.ID))
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			if !slices.Contains(subgraphKeys, k) {
				c.errorf(PathKey(cfgPath, k), "the members are "+strings.Join(subgraphKeys, ", "), "subgraph node %s: unknown config member %s", quote(n.ID), quote(k))
			}
		}
		var graph string
		if raw, ok := cfg["graph"]; !ok || json.Unmarshal(raw, &graph) != nil || graph == "" {
			path := PathKey(cfgPath, "graph")
			if !ok {
				path = cfgPath
			}
			c.errorf(path, hint, "subgraph node %s: config.graph must name the child graph (a non-empty string)", quote(n.ID))
		}
		if raw, ok := cfg["fingerprint"]; ok {
			var fp string
			if json.Unmarshal(raw, &fp) != nil {
				c.errorf(PathKey(cfgPath, "fingerprint"), "pin the child with the string its Fingerprint returns", "subgraph node %s: config.fingerprint must be a string", quote(n.ID))
			}
		}
		for _, m := range []string{"in", "out"} {
			raw, ok := cfg[m]
			if !ok {
				continue
			}
			var chans map[string]json.RawMessage
			mpath := PathKey(cfgPath, m)
			if json.Unmarshal(raw, &chans) != nil || chans == nil {
				c.errorf(mpath, "map channel names to channel names", "subgraph node %s: config.%s must be an object", quote(n.ID), m)
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(chans)) {
				var v string
				if k == "" || json.Unmarshal(chans[k], &v) != nil || v == "" {
					c.errorf(PathKey(mpath, k), "map channel names to channel names", "subgraph node %s: config.%s maps %s to %s; both must be channel names", quote(n.ID), m, quote(k), string(chans[k]))
				}
			}
		}
	}
}

// SubgraphConfigSchema returns the JSON Schema (draft 2020-12) of a
// subgraph node's config, the $defs.subgraphConfig of Schema, as a
// document of its own, indented; `ilmekgen schema --config subgraph`
// prints it.
func SubgraphConfigSchema() []byte {
	var top struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(schemaJSON, &top); err != nil {
		panic("spec: schema.json: " + err.Error())
	}
	var def map[string]json.RawMessage
	if err := json.Unmarshal(top.Defs["subgraphConfig"], &def); err != nil {
		panic("spec: schema.json: $defs.subgraphConfig: " + err.Error())
	}
	def["$schema"] = json.RawMessage(`"https://json-schema.org/draft/2020-12/schema"`)
	out, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		panic("spec: schema.json: " + err.Error())
	}
	return append(out, '\n')
}
