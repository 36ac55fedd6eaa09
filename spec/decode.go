package spec

import (
	"fmt"
	"sort"
)

// Decode parses and validates the spec document data; file names it in
// diagnostics. It returns the graph and every diagnostic, sorted by offset.
// The graph is nil when any diagnostic is an error (an unknown member is
// one, see the package doc); warnings alone (unreachable nodes, repeated
// edges) still return it.
//
// A missing "channels", "nodes" or "edges" member means none (and a graph
// without edges has no entry edge, which is an error); the Graph then holds a
// nil slice, so that Encode leaves the member out again. Node configs and
// extension members are kept as the exact bytes of the document. The document
// is checked against the limits (DefaultLimits unless WithLimits says
// otherwise) before and while it is parsed, so hostile input costs bounded
// time and memory.
func Decode(file string, data []byte, opts ...Option) (*Graph, Diagnostics) {
	o := options{limits: DefaultLimits}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	lim := o.limits.withDefaults()
	if len(data) > lim.MaxBytes {
		return nil, Diagnostics{{
			Severity: SeverityError,
			Pos:      Pos{File: file, Line: 1, Col: 1},
			Message:  fmt.Sprintf("the document is over the limit of %d bytes", lim.MaxBytes),
			Hint:     "split the graph, or raise Limits.MaxBytes with spec.WithLimits",
		}}
	}
	d := &decoder{src: newSource(file, data), lim: lim}
	d.check.bad = make(map[string]bool)
	d.check.quiet = make(map[string]bool)
	d.check.parsed = true
	d.p = newParser(d.src.data, lim.MaxDepth)
	d.p.onDup = d.duplicate
	g := d.document()
	diags := d.diags
	if g != nil && !d.p.failed() {
		c := &checker{g: g, opts: d.check}
		c.run()
		diags = append(diags, c.diags...)
	}
	diags = finish(d.src, diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return g, diags
}

// finish sorts diagnostics by offset and turns offsets into line and column;
// an offset of -1 means no known position.
func finish(src *source, diags Diagnostics) Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].Pos.Offset < diags[j].Pos.Offset })
	for i := range diags {
		switch {
		case src == nil:
			diags[i].Pos = Pos{}
		case diags[i].Pos.Offset < 0:
			diags[i].Pos = Pos{File: src.file}
		default:
			diags[i].Pos = src.pos(diags[i].Pos.Offset)
		}
	}
	return diags
}

// decoder turns the document's JSON into a Graph, reporting what the Go
// types cannot hold (wrong JSON kinds, repeated keys, malformed text). The
// rules a Graph itself can break are the checker's.
type decoder struct {
	src   *source
	p     *parser
	lim   Limits
	diags Diagnostics // offsets only; finish fills in lines and columns
	check checkOpts
}

func (d *decoder) report(sev Severity, off int, path, msg, hint string) {
	d.diags = append(d.diags, Diagnostic{Severity: sev, Pos: Pos{Offset: off}, Path: path, Message: msg, Hint: hint})
}

// errAt reports an error and marks path as handled, so that the checker does
// not report it, or anything under it, again.
func (d *decoder) errAt(off int, path, msg, hint string) {
	d.report(SeverityError, off, path, msg, hint)
	d.check.bad[path] = true
}

// wrongKind consumes the value at path and reports that it is of kind k
// where want was needed; a value that is not even well-formed JSON is
// reported as such instead.
func (d *decoder) wrongKind(path, what, want string, k jsonKind, hint string) {
	off := d.p.pos
	d.p.skip()
	if d.p.failed() {
		return
	}
	d.errAt(off, path, fmt.Sprintf("%s must be %s, not %s", what, want, k), hint)
}

// skipErr consumes the value at path and reports msg at off.
func (d *decoder) skipErr(off int, path, msg, hint string) {
	d.p.skip()
	if d.p.failed() {
		return
	}
	d.errAt(off, path, msg, hint)
}

// duplicate reports a repeated object key; the first occurrence is the one
// decoded.
func (d *decoder) duplicate(k dupKey) {
	first := d.src.pos(k.firstOff)
	d.errAt(k.off, k.path, fmt.Sprintf("duplicate key %s (first at %d:%d)", quote(k.key), first.Line, first.Col),
		"remove one of the two members: JSON readers disagree about which one wins")
}

// visit records the offset of the value at path, which p is at.
func (d *decoder) visit(path string) int {
	d.p.ws()
	d.src.offs[path] = d.p.pos
	return d.p.pos
}

// str reads the string at path, or reports that it is not one.
func (d *decoder) str(path, what, hint string) string {
	if k := d.p.peek(); k != kindString {
		d.wrongKind(path, what, "a string", k, hint)
		return ""
	}
	return d.p.str()
}

// raw reads the value at p as a copy of its bytes.
func (d *decoder) raw() []byte {
	start := d.p.pos
	d.p.skip()
	if d.p.failed() {
		return nil
	}
	return append([]byte(nil), d.p.data[start:d.p.pos]...)
}

// extra keeps the unknown member key (at path) in *e.
func (d *decoder) extra(e *Extra, path, key string, keyOff int) {
	d.src.keys[path] = keyOff
	raw := d.raw()
	if raw == nil {
		return
	}
	if *e == nil {
		*e = make(Extra)
	}
	(*e)[key] = raw
}

// document reads the whole document; nil when it is not an object.
func (d *decoder) document() *Graph {
	p := d.p
	d.visit("")
	if k := p.peek(); k != kindObject {
		d.wrongKind("", "the document", "a JSON object", k,
			`a spec is one object: {"name": ..., "channels": {...}, "nodes": [...], "edges": [...]}`)
		d.syntax()
		return nil
	}
	g := &Graph{src: d.src}
	p.object(func(key string, keyOff int) {
		path := PathKey("", key)
		d.visit(path)
		switch key {
		case "name":
			d.name(g)
		case "channels":
			d.channels(g)
		case "nodes":
			d.nodes(g)
		case "edges":
			d.edges(g)
		default:
			d.extra(&g.Extra, path, key, keyOff)
		}
	})
	if !p.failed() {
		if p.ws(); p.pos < len(p.data) {
			d.errAt(p.pos, "", "trailing data after the document",
				"a spec file holds exactly one JSON object; remove what follows it")
		}
	}
	d.syntax()
	return g
}

// syntax reports the parser's fatal error, if any.
func (d *decoder) syntax() {
	if e := d.p.err; e != nil {
		d.errAt(e.off, e.path, e.msg, e.hint)
	}
}

func (d *decoder) name(g *Graph) {
	switch k := d.p.peek(); k {
	case kindString:
		g.Name, g.NameKind = d.p.str(), Set
	case kindNull:
		d.p.word()
		g.NameKind = Null
	default:
		d.wrongKind("name", `"name"`, "a string or null", k, `write "name": "my-graph", or leave it out`)
	}
}

func (d *decoder) channels(g *Graph) {
	p := d.p
	if k := p.peek(); k != kindObject {
		d.wrongKind("channels", `"channels"`, "an object of channel name to channel", k,
			`write "channels": {"messages": {"reducer": "append"}, "intent": {}}`)
		d.check.noChannels = true
		return
	}
	g.Channels = []Channel{}
	p.object(func(name string, _ int) {
		cpath := PathKey("channels", name)
		d.visit(cpath)
		c := Channel{Name: name}
		if k := p.peek(); k != kindObject {
			d.wrongKind(cpath, "channel "+quote(name), "an object", k,
				fmt.Sprintf(`write %s: {} or %s: {"reducer": "append"}`, quote(name), quote(name)))
		} else {
			p.object(func(key string, keyOff int) {
				path := PathKey(cpath, key)
				off := d.visit(path)
				if key != "reducer" {
					d.extra(&c.Extra, path, key, keyOff)
					return
				}
				r := d.str(path, "channel "+quote(name)+": reducer", "use one of "+list(Reducers))
				if r == "" && !d.check.bad[path] && !p.failed() {
					d.errAt(off, path, fmt.Sprintf("channel %s: unknown reducer %q", quote(name), r),
						"use one of "+list(Reducers)+", or leave reducer out for last_write")
				}
				c.Reducer = Reducer(r)
			})
		}
		g.Channels = append(g.Channels, c)
	})
	if n := len(g.Channels); n > d.lim.MaxChannels && !p.failed() {
		d.errAt(d.src.offs["channels"], "channels", fmt.Sprintf("graph has %d channels, over the limit of %d", n, d.lim.MaxChannels),
			"split the graph, or raise Limits.MaxChannels with spec.WithLimits")
	}
	sort.SliceStable(g.Channels, func(i, j int) bool { return g.Channels[i].Name < g.Channels[j].Name })
}
