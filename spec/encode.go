package spec

import "sort"

// Encode writes g in canonical form: two-space indentation, a trailing
// newline, and a fixed member order — top level name, channels, nodes,
// edges; channel reducer; node id, type, config; edge from, to, when;
// predicate channel then its operator — each object's unknown members after
// its known ones, sorted by key. Channels are written sorted by name, nodes
// and edges in their order. Raw JSON (Config, Extra) is re-indented with its
// object keys sorted and its numbers' text kept verbatim, as are number
// literals of predicates. Encoding is a fixed point: decoding the output and
// encoding again gives the same bytes.
//
// Presence follows the Go values: a nil Channels, Nodes or Edges slice and a
// nil Config are left out, a non-nil empty one is written as {} or [];
// Name is written when NameKind is Set or Name is not empty, and as null when
// NameKind is Null. Encode does not check g (Validate does): raw JSON that is
// not one well-formed value and number text that is not a JSON number are
// written as null, an Extra member named like a known member is left out, and
// of channels declared twice only the first is written.
func (g *Graph) Encode() []byte {
	w := &writer{}
	o := w.object(0)
	switch {
	case g.NameKind == Set || g.Name != "":
		o.key("name")
		w.str(g.Name)
	case g.NameKind == Null:
		o.key("name")
		w.b = append(w.b, "null"...)
	}
	if g.Channels != nil {
		o.key("channels")
		chans := append([]Channel(nil), g.Channels...)
		sort.SliceStable(chans, func(i, j int) bool { return chans[i].Name < chans[j].Name })
		co := w.object(1)
		for i, c := range chans {
			if i > 0 && c.Name == chans[i-1].Name {
				continue // a repeat (Validate refuses it): the first declaration wins
			}
			co.key(c.Name)
			w.channel(c, 2)
		}
		co.close()
	}
	if g.Nodes != nil {
		o.key("nodes")
		a := w.array(1)
		for _, n := range g.Nodes {
			a.elem()
			w.node(n, 2)
		}
		a.close()
	}
	if g.Edges != nil {
		o.key("edges")
		a := w.array(1)
		for _, e := range g.Edges {
			a.elem()
			w.edge(e, 2)
		}
		a.close()
	}
	w.extra(o, g.Extra, topFields)
	o.close()
	w.b = append(w.b, '\n')
	return w.b
}

func (w *writer) channel(c Channel, level int) {
	o := w.object(level)
	if c.Reducer != "" {
		o.key("reducer")
		w.str(string(c.Reducer))
	}
	w.extra(o, c.Extra, channelFields)
	o.close()
}

func (w *writer) node(n Node, level int) {
	o := w.object(level)
	o.key("id")
	w.str(n.ID)
	o.key("type")
	w.str(n.Type)
	if n.Config != nil {
		o.key("config")
		w.raw(n.Config, level+1)
	}
	if n.Goto != nil {
		o.key("goto")
		a := w.array(level + 1)
		for _, t := range n.Goto {
			a.elem()
			w.str(t)
		}
		a.close()
	}
	w.extra(o, n.Extra, nodeFields)
	o.close()
}

func (w *writer) edge(e Edge, level int) {
	o := w.object(level)
	o.key("from")
	w.str(e.From)
	o.key("to")
	w.str(e.To)
	if e.When != nil {
		o.key("when")
		w.predicate(e.When, level+1)
	}
	w.extra(o, e.Extra, edgeFields)
	o.close()
}

func (w *writer) predicate(p *Predicate, level int) {
	o := w.object(level)
	o.key("channel")
	w.str(p.Channel)
	if p.Op != "" {
		o.key(string(p.Op))
		if p.Op == OpIn {
			a := w.array(level + 1)
			for _, l := range p.Values {
				a.elem()
				w.literal(l)
			}
			a.close()
		} else {
			w.literal(p.Value)
		}
	}
	w.extra(o, p.Extra, predicateFields)
	o.close()
}

func (w *writer) literal(l Literal) {
	switch l.Kind {
	case LitString:
		w.str(l.Str)
	case LitNumber:
		if validNumber(l.Num) {
			w.number(l.Num)
		} else {
			w.b = append(w.b, "null"...)
		}
	case LitBool:
		if l.Bool {
			w.b = append(w.b, "true"...)
		} else {
			w.b = append(w.b, "false"...)
		}
	default:
		w.b = append(w.b, "null"...)
	}
}

// extra writes the members of e whose keys are not known fields, sorted.
func (w *writer) extra(o *objectWriter, e Extra, known []string) {
	for _, k := range e.Keys() {
		if contains(known, k) {
			continue
		}
		o.key(k)
		w.raw(e[k], o.level+1)
	}
}

// objectWriter writes the punctuation of one object; the caller writes each
// value after key.
type objectWriter struct {
	w     *writer
	level int
	n     int
}

func (w *writer) object(level int) *objectWriter {
	w.b = append(w.b, '{')
	return &objectWriter{w: w, level: level}
}

func (o *objectWriter) key(k string) {
	if o.n > 0 {
		o.w.b = append(o.w.b, ',')
	}
	o.n++
	o.w.newline(o.level + 1)
	o.w.str(k)
	o.w.b = append(o.w.b, ": "...)
}

func (o *objectWriter) close() { o.closeWith('}') }

func (o *objectWriter) closeWith(c byte) {
	if o.n > 0 {
		o.w.newline(o.level)
	}
	o.w.b = append(o.w.b, c)
}

// arrayWriter writes the punctuation of one array.
type arrayWriter objectWriter

func (w *writer) array(level int) *arrayWriter {
	w.b = append(w.b, '[')
	return &arrayWriter{w: w, level: level}
}

func (a *arrayWriter) elem() {
	if a.n > 0 {
		a.w.b = append(a.w.b, ',')
	}
	a.n++
	a.w.newline(a.level + 1)
}

func (a *arrayWriter) close() { (*objectWriter)(a).closeWith(']') }
