package gen

import (
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// Mermaid draws g as a Mermaid flowchart (top to bottom). Every node is a
// box labelled with its id and type; __start__ and __end__ are rounded
// terminals (drawn only when an edge uses them); edges keep their document
// order, and a guarded edge is labelled with its predicate as
// predicateText writes it (intent = "buy", n < 3, items is truthy,
// x in ["a", "b"]). Node ids become Mermaid ids n0, n1... by index, and
// every label is a quoted Mermaid string with '"' and the characters
// Mermaid treats as markup written as HTML entities, so no document text can
// change the diagram's structure. The output is stable: the same document
// always gives the same text.
func Mermaid(g *spec.Graph) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	usesStart, usesEnd := false, false
	for _, e := range g.Edges {
		usesStart = usesStart || e.From == spec.Start
		usesEnd = usesEnd || e.To == spec.End
	}
	if usesStart {
		b.WriteString("    start([\"__start__\"])\n")
	}
	for i, n := range g.Nodes {
		fmt.Fprintf(&b, "    n%d[\"%s<br/><i>%s</i>\"]\n", i, mermaidText(n.ID), mermaidText(n.Type))
	}
	if usesEnd {
		b.WriteString("    end_([\"__end__\"])\n")
	}
	id := func(name string, start bool) string {
		switch {
		case start && name == spec.Start:
			return "start"
		case !start && name == spec.End:
			return "end_"
		}
		if i := g.NodeIndex(name); i >= 0 {
			return fmt.Sprintf("n%d", i)
		}
		return "unknown"
	}
	for _, e := range g.Edges {
		from, to := id(e.From, true), id(e.To, false)
		if e.When == nil {
			fmt.Fprintf(&b, "    %s --> %s\n", from, to)
			continue
		}
		fmt.Fprintf(&b, "    %s -->|\"%s\"| %s\n", from, mermaidText(predicateText(e.When)), to)
	}
	return b.String()
}

// predicateText writes a predicate for people: channel, operator and
// literal as JSON (strings quoted).
func predicateText(p *spec.Predicate) string {
	ch := p.Channel
	switch p.Op {
	case spec.OpEq:
		return ch + " = " + jsonLit(p.Value)
	case spec.OpNeq:
		return ch + " != " + jsonLit(p.Value)
	case spec.OpGt:
		return ch + " > " + jsonLit(p.Value)
	case spec.OpLt:
		return ch + " < " + jsonLit(p.Value)
	case spec.OpIn:
		parts := make([]string, len(p.Values))
		for i, l := range p.Values {
			parts[i] = jsonLit(l)
		}
		return ch + " in [" + strings.Join(parts, ", ") + "]"
	case spec.OpTruthy:
		if p.Value.Bool {
			return ch + " is truthy"
		}
		return ch + " is falsy"
	}
	return ch + " ?"
}

// jsonLit writes a literal as JSON text.
func jsonLit(l spec.Literal) string {
	switch l.Kind {
	case spec.LitString:
		return fmt.Sprintf("%q", l.Str)
	case spec.LitNumber:
		return l.Num
	case spec.LitBool:
		return fmt.Sprint(l.Bool)
	}
	return "null"
}

// mermaidText escapes s for the inside of a quoted Mermaid label: quotes,
// markup characters and line breaks become entities.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '|':
			b.WriteString("#124;")
		case '`':
			b.WriteString("#96;")
		case '\n', '\r', '\u2028', '\u2029':
			b.WriteString(" ")
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, "#%d;", r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
