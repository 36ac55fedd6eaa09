package spec

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Validate checks g by the rules Decode applies once a document is parsed:
// reducers are built in, node ids are unique, present and not reserved, node
// types are present, edges join declared nodes (leaving __start__, reaching
// __end__), at least one edge leaves __start__, and every guard names a
// declared channel and exactly one operator with a literal of the kind that
// operator takes. For graphs built in Go it also checks what a decoded graph
// cannot get wrong: raw JSON is one well-formed value (Config an object or
// null), number literals are JSON number text, strings are UTF-8, Channels
// are sorted by name without repeats, and no Extra member is named like a
// known member. Warnings name unknown members, unreachable nodes and
// repeated edges.
//
// Diagnostics carry positions when g was decoded (and not changed since),
// else zero positions; either way they carry JSON paths.
func (g *Graph) Validate() Diagnostics {
	c := &checker{g: g}
	c.run()
	return finish(g.src, c.diags)
}

// checkOpts tells the checker what the decoder already reported.
type checkOpts struct {
	bad   map[string]bool // drop diagnostics at and under these paths
	quiet map[string]bool // drop diagnostics at exactly these paths
	// noChannels, noNodes and noEdges say that member was unusable, so
	// checks that need it are skipped rather than drown the real error.
	noChannels, noNodes, noEdges bool
	// parsed says strings and raw JSON came from the parser: well-formed.
	parsed bool
}

// checker runs the semantic rules over a Graph.
type checker struct {
	g     *Graph
	opts  checkOpts
	diags Diagnostics // offsets only; finish fills in lines and columns
	// errs counts the errors found, the suppressed ones (already reported
	// by the decoder) too.
	errs int
	// badGuard marks the edges whose guard's operator or literal is in
	// error; coverage does not describe them.
	badGuard map[int]bool
}

func (c *checker) report(sev Severity, path, msg, hint string) {
	if c.suppressed(path) {
		return
	}
	off := -1
	if c.g.src != nil {
		off = c.g.src.near(path)
	}
	c.diags = append(c.diags, Diagnostic{Severity: sev, Pos: Pos{Offset: off}, Path: path, Message: msg, Hint: hint})
}

func (c *checker) errorf(path, hint, format string, args ...any) {
	c.errs++
	c.report(SeverityError, path, fmt.Sprintf(format, args...), hint)
}

func (c *checker) warnf(path, hint, format string, args ...any) {
	c.report(SeverityWarning, path, fmt.Sprintf(format, args...), hint)
}

func (c *checker) suppressed(path string) bool {
	if c.opts.quiet[path] || c.opts.bad[path] {
		return true
	}
	if len(c.opts.bad) == 0 {
		return false
	}
	_, ends, ok := parsePath(path)
	if !ok {
		return false
	}
	for _, e := range ends {
		if c.opts.bad[path[:e]] {
			return true
		}
	}
	return false
}

// where describes the position of path for a message: "nodes[0] (3:5)", or
// just the path for a graph built in Go.
func (c *checker) where(path string) string {
	if c.g.src != nil {
		if off := c.g.src.near(path); off >= 0 {
			p := c.g.src.pos(off)
			return fmt.Sprintf("%s (%d:%d)", path, p.Line, p.Col)
		}
	}
	return path
}

func (c *checker) run() {
	g := c.g
	c.text("name", g.Name)
	c.extra("", "the document", g.Extra, topFields)
	channels := c.channels()
	ids := c.nodes()
	c.subgraphs()
	c.gotos(ids)
	c.edges(ids, channels)
	c.graph(ids)
}

// text checks that a string of a graph built in Go is UTF-8.
func (c *checker) text(path, s string) {
	if !c.opts.parsed && !utf8.ValidString(s) {
		c.errorf(path, "strings in a spec must be valid UTF-8", "%s is not valid UTF-8: %s", path, quote(s))
	}
}

// raw checks raw JSON of a graph built in Go.
func (c *checker) raw(path string, raw []byte) {
	if c.opts.parsed {
		return
	}
	if err := checkJSON(raw); err != nil {
		c.errorf(path, "set it to the bytes of one JSON value, e.g. from json.Marshal",
			"%s is not well-formed JSON: %s at offset %d", path, strings.TrimPrefix(err.msg, "malformed JSON: "), err.off)
	}
}

// SchemaMember is the top-level member in which a document names its JSON
// Schema for editors (e.g. "$schema": "./ilmek.schema.json"). The decoder
// keeps it like an extension member when it is a string.
const SchemaMember = "$schema"

// ExtensionPrefix starts the name of an extension member: a member, at any
// level of the document (the document, a channel, a node, an edge, a
// predicate), that holds a builder's own data, such as canvas positions or
// notes. Extension members are kept verbatim through every round trip and
// ignored by execution and by document fingerprints.
const ExtensionPrefix = "x-"

// IsExtension reports whether key names an extension member.
func IsExtension(key string) bool { return strings.HasPrefix(key, ExtensionPrefix) }

// extra checks the members of e: extension members and a string "$schema"
// at the top are kept; any other member is an error, because a misspelt
// known member ("whne" for "when") would otherwise silently change what the
// graph does; one named like a known member is refused too.
func (c *checker) extra(parent, what string, e Extra, known []string) {
	for _, k := range e.Keys() {
		path := PathKey(parent, k)
		if contains(known, k) {
			c.errorf(path, "set the field instead of an Extra member", "Extra member %s of %s shadows a known member", quote(k), what)
			continue
		}
		c.raw(path, e[k])
		if IsExtension(k) {
			continue
		}
		if parent == "" && k == SchemaMember {
			// Editors read "$schema" to validate and complete the document.
			if v := bytes.TrimLeft(e[k], " \t\r\n"); len(v) > 0 && v[0] == '"' {
				continue
			}
			c.errorf(path, "write the URI or path of the document's JSON Schema as a string, e.g. \"./ilmek.schema.json\" (ilmekgen schema prints it)",
				"%s must be a string", quote(k))
			continue
		}
		c.errorf(path, didYouMean(k, known)+"the known members here are "+list(known)+
			"; put a builder's own data in a member named \"x-…\"; a member of a newer version of the format needs a newer ilmek",
			"unknown member %s in %s", quote(k), what)
	}
}

// channels checks the channel declarations and returns the declared names.
func (c *checker) channels() map[string]bool {
	declared := make(map[string]bool, len(c.g.Channels))
	for i, ch := range c.g.Channels {
		path := PathKey("channels", ch.Name)
		c.text(path, ch.Name)
		if declared[ch.Name] {
			c.errorf(path, "declare every channel once", "channel %s is declared twice", quote(ch.Name))
		} else if i > 0 && ch.Name < c.g.Channels[i-1].Name {
			c.errorf(path, "sort Graph.Channels by Name; Graph.Channel looks channels up by binary search",
				"channel %s is out of order", quote(ch.Name))
		}
		declared[ch.Name] = true
		if ch.Name == "" {
			c.errorf(path, `give the channel a name, e.g. "messages": {"reducer": "append"}`, "channel name is empty")
		}
		if ch.Reducer != "" && !isReducer(ch.Reducer) {
			rpath := PathKey(path, "reducer")
			c.errorf(rpath, didYouMean(string(ch.Reducer), reducerNames())+"use one of "+list(Reducers)+", or leave reducer out for last_write",
				"channel %s: unknown reducer %s", quote(ch.Name), quote(string(ch.Reducer)))
		}
		c.extra(path, "channel "+quote(ch.Name), ch.Extra, channelFields)
	}
	return declared
}

func isReducer(r Reducer) bool {
	for _, x := range Reducers {
		if x == r {
			return true
		}
	}
	return false
}

func reducerNames() []string {
	names := make([]string, len(Reducers))
	for i, r := range Reducers {
		names[i] = string(r)
	}
	return names
}

// nodes checks the node list and returns the index of each usable id.
func (c *checker) nodes() map[string]int {
	ids := make(map[string]int, len(c.g.Nodes))
	for i, n := range c.g.Nodes {
		npath := PathIndex("nodes", i)
		idPath := PathKey(npath, "id")
		c.text(idPath, n.ID)
		c.text(PathKey(npath, "type"), n.Type)
		switch {
		case n.ID == "":
			c.errorf(idPath, `give every node a unique id, e.g. "id": "agent"`, "node id is missing or empty")
		case n.ID == Start || n.ID == End:
			c.errorf(idPath, "__start__ and __end__ name the graph's entry and exit, which edges reach by name; rename the node",
				"node id %q is reserved", n.ID)
		default:
			if first, dup := ids[n.ID]; dup {
				c.errorf(idPath, "node ids must be unique; rename one of the two",
					"duplicate node %s (first declared at %s)", quote(n.ID), c.where(PathKey(PathIndex("nodes", first), "id")))
			} else {
				ids[n.ID] = i
			}
		}
		if n.Type == "" {
			what := "node"
			if n.ID != "" {
				what += " " + quote(n.ID)
			}
			c.errorf(PathKey(npath, "type"), `name the node's registry entry, e.g. "type": "llm"`,
				"%s has no type", what)
		}
		if n.Config != nil {
			c.config(PathKey(npath, "config"), n.Config)
		}
		c.extra(npath, "node "+quote(n.ID), n.Extra, nodeFields)
	}
	return ids
}

// config checks a Config of a graph built in Go: one JSON object or null.
func (c *checker) config(path string, raw []byte) {
	if c.opts.parsed {
		return
	}
	if err := checkJSON(raw); err != nil {
		c.raw(path, raw)
		return
	}
	p := newParser(raw, hardMaxDepth)
	if k := p.peek(); k != kindObject && k != kindNull {
		c.errorf(path, "use a JSON object, or nil to leave config out", "node config must be an object or null, not %s", k)
	}
}
