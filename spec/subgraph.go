package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SubgraphType is the node type of a subgraph node: a node that runs
// another graph, named by its document's name, to its end. The runtime
// provides it (runtime.WithSubgraphs); its config is
//
//	{"graph": NAME, "fingerprint"?: FINGERPRINT, "limit"?: SUPERSTEPS,
//	 "in"?: {CHILD_CHANNEL: PARENT_CHANNEL, ...},
//	 "out"?: {PARENT_CHANNEL: CHILD_CHANNEL, ...}}
//
// Validate checks that shape: an object holding a non-empty string graph,
// a string fingerprint, a positive integer limit, and in and out objects
// of non-empty channel names, nothing else. Whether the channels and the
// child exist is the builder's to check, since it alone knows the child
// (runtime.CheckSubgraphs).
//
// Versions: a changed child is seen as a changed config of the node that
// runs it. A pin is config, so Fingerprint and Compare see a new pinned
// version directly; the runtime versions a parent with every child pinned
// (PinSubgraphs, PinnedFingerprints), so it sees every child's version.
const SubgraphType = "subgraph"

// subgraphKeys are the members of a subgraph node's config.
var subgraphKeys = []string{"graph", "fingerprint", "limit", "in", "out"}

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
		if raw, ok := cfg["limit"]; ok {
			var lim int
			if json.Unmarshal(raw, &lim) != nil || lim < 1 {
				c.errorf(PathKey(cfgPath, "limit"), "give the child's recursion limit as a positive integer, or leave it out for the default (25)", "subgraph node %s: config.limit must be a positive integer, got %s", quote(n.ID), string(raw))
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

// SubgraphChild is what the checks of a subgraph node need of its child:
// its name, its fingerprint (for a pin), its channels with their reducers
// ("custom" for a reducer a document cannot name), and the names of the
// graphs it contains through its own subgraph nodes, at any depth (for
// cycles).
type SubgraphChild struct {
	Name        string
	Fingerprint string
	Channels    map[string]Reducer
	Contains    []string
}

// SubgraphChildren returns the SubgraphChild of every document of set,
// by name, each with the graphs it contains within set and the version
// fingerprint the runtime gives it with those children (PinnedFingerprints),
// the one a pin must name.
func SubgraphChildren(set ...*Graph) map[string]SubgraphChild {
	byName := map[string]*Graph{}
	for _, d := range set {
		byName[d.Name] = d
	}
	fps := PinnedFingerprints(set...)
	out := map[string]SubgraphChild{}
	for _, d := range set {
		c := SubgraphChild{Name: d.Name, Fingerprint: fps[d.Name], Channels: map[string]Reducer{}}
		for _, ch := range d.Channels {
			c.Channels[ch.Name] = ch.Kind()
		}
		seen := map[string]bool{}
		var walk func(g *Graph)
		walk = func(g *Graph) {
			for _, name := range subgraphRefs(g) {
				if seen[name] {
					continue
				}
				seen[name] = true
				if k := byName[name]; k != nil {
					walk(k)
				}
			}
		}
		walk(d)
		c.Contains = slices.Sorted(maps.Keys(seen))
		out[d.Name] = c
	}
	return out
}

// subgraphRefs lists the graphs g's subgraph nodes name.
func subgraphRefs(g *Graph) []string {
	var out []string
	for _, n := range g.Nodes {
		if n.Type != SubgraphType {
			continue
		}
		var cfg struct {
			Graph string `json:"graph"`
		}
		if json.Unmarshal(n.Config, &cfg) == nil && cfg.Graph != "" {
			out = append(out, cfg.Graph)
		}
	}
	return out
}

// SubgraphMapping checks one subgraph node of graph parent, whose channels
// are given with their reducers, against its child: the pin, no cycle,
// every mapped channel declared on its side, and reducers that keep the
// mapping's meaning. A child channel may start from a parent channel of
// its own reducer, or be last_write (it takes the value as it is); a
// parent channel may take a child channel of its own reducer, or be
// last_write; an append channel may not take back the elements it fed.
// The diagnostics are errors whose paths are relative to the node
// ("config.in.order"), without positions.
func SubgraphMapping(parent string, channels map[string]Reducer, graph, fingerprint string, in, out map[string]string, child SubgraphChild) Diagnostics {
	var ds Diagnostics
	add := func(path, msg, hint string) {
		ds = append(ds, Diagnostic{Severity: SeverityError, Path: path, Message: msg, Hint: hint})
	}
	if fingerprint != "" && fingerprint != child.Fingerprint {
		add("config.fingerprint", "pins graph "+quote(graph)+" at "+fingerprint+", but the graph given is "+child.Fingerprint, "pin the child's current fingerprint or give the pinned version")
	}
	if child.Name == parent || slices.Contains(child.Contains, parent) {
		add("config.graph", "graph "+quote(parent)+" contains itself through subgraph "+quote(graph), "remove the cycle of subgraphs")
	}
	fed := map[[2]string]bool{}
	for _, cc := range slices.Sorted(maps.Keys(in)) {
		pc := in[cc]
		path := PathKey("config.in", cc)
		cr, cok := child.Channels[cc]
		pr, pok := channels[pc]
		switch {
		case !cok:
			add(path, "graph "+quote(graph)+" has no channel "+quote(cc), "name a channel of the child")
		case !pok:
			add(path, "feeds from channel "+quote(pc)+", which graph "+quote(parent)+" does not declare", "declare it or name a declared channel")
		case cr != LastWrite && cr != pr:
			add(path, "child channel "+quote(cc)+" ("+string(cr)+") cannot start from parent channel "+quote(pc)+" ("+string(pr)+")", "map channels of the same reducer, or feed a last_write child channel")
		case pr == Append && cr == Append:
			fed[[2]string{cc, pc}] = true
		}
	}
	for _, pc := range slices.Sorted(maps.Keys(out)) {
		cc := out[pc]
		path := PathKey("config.out", pc)
		cr, cok := child.Channels[cc]
		pr, pok := channels[pc]
		switch {
		case !pok:
			add(path, "graph "+quote(parent)+" has no channel "+quote(pc), "declare it or name a declared channel")
		case !cok:
			add(path, "takes channel "+quote(cc)+", which graph "+quote(graph)+" does not declare", "name a channel of the child")
		case pr == Append && cr == Append && fed[[2]string{cc, pc}]:
			add(path, "append channel "+quote(pc)+" would get back the elements it fed to "+quote(cc)+", twice", "write back to another channel")
		case pr != LastWrite && cr != LastWrite && cr != pr:
			add(path, "parent channel "+quote(pc)+" ("+string(pr)+") cannot take child channel "+quote(cc)+" ("+string(cr)+")", "map channels of the same reducer, or write to a last_write parent channel")
		}
	}
	return ds
}

// CheckSubgraphs reports, placed in doc, every subgraph node whose child
// is not among children (by name) or whose mapping SubgraphMapping
// refuses. Decode checks the config's shape; this needs the children,
// which the runtime (runtime.WithSubgraphs) and ilmekgen (--subgraph)
// know.
func CheckSubgraphs(doc *Graph, children map[string]SubgraphChild) Diagnostics {
	chans := map[string]Reducer{}
	for _, c := range doc.Channels {
		chans[c.Name] = c.Kind()
	}
	var out Diagnostics
	for i, n := range doc.Nodes {
		if n.Type != SubgraphType {
			continue
		}
		node := PathIndex("nodes", i)
		place := func(d Diagnostic) {
			rel := d.Path
			path := node + "." + rel
			pos := doc.Pos(path)
			for pos == (Pos{}) && strings.Contains(rel, ".") {
				rel = rel[:strings.LastIndex(rel, ".")]
				path = node + "." + rel
				pos = doc.Pos(path)
			}
			d.Path, d.Pos, d.Message = path, pos, "node "+quote(n.ID)+": "+d.Message
			out = append(out, d)
		}
		var cfg struct {
			Graph       string            `json:"graph"`
			Fingerprint string            `json:"fingerprint"`
			In          map[string]string `json:"in"`
			Out         map[string]string `json:"out"`
		}
		if json.Unmarshal(n.Config, &cfg) != nil || cfg.Graph == "" {
			continue // Decode placed it
		}
		if cfg.Graph == doc.Name {
			place(Diagnostic{Severity: SeverityError, Path: "config.graph", Message: "graph " + quote(doc.Name) + " contains itself", Hint: "remove the cycle of subgraphs"})
			continue
		}
		child, ok := children[cfg.Graph]
		if !ok {
			known := slices.Sorted(maps.Keys(children))
			place(Diagnostic{Severity: SeverityError, Path: "config.graph", Message: "graph " + quote(cfg.Graph) + " is not registered (registered: " + strings.Join(known, ", ") + ")", Hint: "register the child graph (runtime.WithSubgraphs, ilmekgen --subgraph)"})
			continue
		}
		for _, d := range SubgraphMapping(doc.Name, chans, cfg.Graph, cfg.Fingerprint, cfg.In, cfg.Out, child) {
			place(d)
		}
	}
	return out
}

// SubgraphConfig is the config of a "subgraph" node: the child graph by
// name (the name of its document, Shape().Name), optionally pinned to a
// fingerprint, and explicit channel maps. Nothing crosses the boundary
// that the maps do not name.
//
//	{ "id": "refund", "type": "subgraph",
//	  "config": { "graph": "refund", "in": {"order": "order_id"}, "out": {"refund_status": "status"} } }
type SubgraphConfig struct {
	// Graph names the child graph.
	Graph string `json:"graph"`
	// Fingerprint, when set, pins the child: a child whose
	// runtime Graph.Fingerprint differs is refused when the parent is built.
	// The runtime versions the parent with every child pinned, set or not
	// (PinSubgraphs), so a new child version is a changed config of the
	// node either way; setting it makes the document itself say so.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Limit is the child run's own recursion limit: the supersteps one
	// pass of the child may take inside the parent task (the parent's
	// limit counts the parent's supersteps only). Zero, or left out,
	// means the runtime's default, 25 (runtime.DefaultRecursionLimit).
	Limit int `json:"limit,omitempty"`
	// In maps each child channel to the parent channel it starts from.
	In map[string]string `json:"in,omitempty"`
	// Out maps each parent channel to the child channel whose final value
	// the parent task writes to it.
	Out map[string]string `json:"out,omitempty"`
}

// CheckSubgraphCycles reports every document of docs (by name) that
// contains itself through the "subgraph" nodes of the set, directly or
// through others, placed at the node that closes the cycle.
func CheckSubgraphCycles(docs ...*Graph) Diagnostics {
	byName := map[string]*Graph{}
	for _, d := range docs {
		byName[d.Name] = d
	}
	var out Diagnostics
	for _, d := range docs {
		seen := map[string]bool{}
		var walk func(g *Graph) bool
		walk = func(g *Graph) bool {
			for _, n := range g.Nodes {
				if n.Type != SubgraphType {
					continue
				}
				var cfg SubgraphConfig
				if json.Unmarshal(n.Config, &cfg) != nil {
					continue
				}
				if cfg.Graph == d.Name {
					return true
				}
				if c := byName[cfg.Graph]; c != nil && !seen[cfg.Graph] {
					seen[cfg.Graph] = true
					if walk(c) {
						return true
					}
				}
			}
			return false
		}
		for i, n := range d.Nodes {
			if n.Type != SubgraphType {
				continue
			}
			var cfg SubgraphConfig
			if json.Unmarshal(n.Config, &cfg) != nil {
				continue
			}
			clear(seen)
			c := byName[cfg.Graph]
			if cfg.Graph == d.Name || (c != nil && walk(c)) {
				path := PathKey(PathKey(PathIndex("nodes", i), "config"), "graph")
				out = append(out, Diagnostic{Severity: SeverityError, Pos: d.Pos(path), Path: path,
					Message: fmt.Sprintf("node %q: graph %q contains itself through subgraph %q", n.ID, d.Name, cfg.Graph), Hint: "remove the cycle of subgraphs"})
			}
		}
	}
	return out
}

// PinSubgraphs returns a copy of g in which every "subgraph" node naming
// a graph of fingerprints (child document name to its fingerprint) pins
// it: its config's "fingerprint" is set to that fingerprint. Nodes naming
// other graphs, and every other part, are left as they are; a node already
// pinned is pinned again to the given fingerprint.
//
// It is how a changed child is seen (see SubgraphType): the runtime takes
// the pinned form of a graph as its version identity, so the parent's
// fingerprint covers its children, and Compare of two pinned forms reports
// a new child version as a NodeConfigChanged of the subgraph node.
func PinSubgraphs(g *Graph, fingerprints map[string]string) *Graph {
	if g == nil {
		return nil
	}
	c := g.Clone()
	for i, n := range c.Nodes {
		if n.Type != SubgraphType {
			continue
		}
		var cfg map[string]json.RawMessage
		if json.Unmarshal(n.Config, &cfg) != nil || cfg == nil {
			continue
		}
		var name string
		if json.Unmarshal(cfg["graph"], &name) != nil {
			continue
		}
		fp, ok := fingerprints[name]
		if !ok {
			continue
		}
		raw, err := json.Marshal(fp)
		if err != nil {
			continue
		}
		cfg["fingerprint"] = raw
		if out, err := json.Marshal(cfg); err == nil {
			c.Nodes[i].Config = out
		}
	}
	return c
}

// subgraphPin returns a subgraph node config's graph and pinned
// fingerprint ("" when it pins none), and whether config is one.
func subgraphPin(config json.RawMessage) (graph, fingerprint string, ok bool) {
	var cfg struct {
		Graph       string `json:"graph"`
		Fingerprint string `json:"fingerprint"`
	}
	if json.Unmarshal(config, &cfg) != nil || cfg.Graph == "" {
		return "", "", false
	}
	return cfg.Graph, cfg.Fingerprint, true
}

// PinnedFingerprints returns, by name, the version fingerprint of every
// document of set as the runtime computes it for a graph that runs the
// other documents of set as its children: the fingerprint of the document
// with each subgraph node naming a graph of set pinned to that graph's own
// pinned fingerprint, at any depth (PinSubgraphs). A document that names
// no graph of set keeps its Fingerprint. Tools comparing a parent across
// versions of its children (ilmekgen diff --subgraph) pin the parent with
// it. A document inside a cycle of set is pinned as far as the cycle
// allows; CheckSubgraphCycles refuses such sets.
func PinnedFingerprints(set ...*Graph) map[string]string {
	byName := map[string]*Graph{}
	for _, d := range set {
		if d != nil {
			byName[d.Name] = d
		}
	}
	out := map[string]string{}
	busy := map[string]bool{}
	var fp func(name string) string
	fp = func(name string) string {
		if f, ok := out[name]; ok {
			return f
		}
		d := byName[name]
		busy[name] = true
		pins := map[string]string{}
		for _, child := range subgraphRefs(d) {
			if _, ok := byName[child]; ok && !busy[child] {
				pins[child] = fp(child)
			}
		}
		busy[name] = false
		f := d.Fingerprint()
		if len(pins) > 0 {
			f = PinSubgraphs(d, pins).Fingerprint()
		}
		out[name] = f
		return f
	}
	for name := range byName {
		fp(name)
	}
	return out
}
