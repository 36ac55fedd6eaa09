package gen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ilmek-go/ilmek/spec"
)

// Mermaid draws g as a Mermaid flowchart (top to bottom), exactly:
//
//   - every node is a box labelled with its id and, in italics, its type,
//     declared in document order as n0, n1, ... (its index in g.Nodes);
//   - __start__ and __end__ are rounded terminals, start([...]) and
//     end_([...]), drawn when an edge uses them;
//   - every edge is drawn in document order, and a guarded edge is labelled
//     with its predicate: intent = "buy", intent != "buy", n > 2, n < 3,
//     x in ["a", 1, null], items is truthy, items is falsy (truthy: false).
//     The operator is ASCII (!= for neq); literals are JSON, with number
//     literals as the document wrote them (1e2 stays 1e2).
//
// Names are exact. A node id, node type or channel name is written as it
// is when it is made of printable characters other than spaces, '"' and
// '\'; any other name (empty, with spaces, quotes, backslashes, control or
// invisible characters) is written as a JSON string ("a b", "a\nb",
// "\u202e"), so two different names never look alike. String literals are
// always JSON strings.
//
// No document text can change the diagram's structure: ids are generated
// (n0, n1...; an edge endpoint that names no node, possible only in a graph
// built in Go, becomes u0, u1... labelled "(undeclared node)"), every label
// is a quoted Mermaid string, and every character Mermaid or the browser
// could read as markup — " # % & : < > ` | and the two characters of
// Mermaid's internal entity markers — is written as a Mermaid entity code
// (#quot;, #35;, ...), which Mermaid turns back into the character. The
// output is stable: the same document always gives the same text.
func Mermaid(g *spec.Graph) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	index := make(map[string]int, len(g.Nodes)) // node id → first index
	for i, n := range g.Nodes {
		if _, dup := index[n.ID]; !dup {
			index[n.ID] = i
		}
	}
	usesStart, usesEnd := false, false
	var undeclared []string // endpoints that name no node, in order of use
	seen := map[string]bool{}
	for _, e := range g.Edges {
		for _, name := range []string{e.From, e.To} {
			switch {
			case name == spec.Start:
				usesStart = true
			case name == spec.End:
				usesEnd = true
			default:
				if _, ok := index[name]; !ok && !seen[name] {
					seen[name] = true
					undeclared = append(undeclared, name)
				}
			}
		}
	}
	if usesStart {
		b.WriteString("    start([\"__start__\"])\n")
	}
	for i, n := range g.Nodes {
		fmt.Fprintf(&b, "    n%d[\"%s<br/><i>%s</i>\"]\n", i, mermaidText(mermaidName(n.ID)), mermaidText(mermaidName(n.Type)))
	}
	for i, name := range undeclared {
		fmt.Fprintf(&b, "    u%d[\"%s<br/><i>%s</i>\"]\n", i, mermaidText(mermaidName(name)), mermaidText("(undeclared node)"))
	}
	if usesEnd {
		b.WriteString("    end_([\"__end__\"])\n")
	}
	id := func(name string) string {
		switch name {
		case spec.Start:
			return "start"
		case spec.End:
			return "end_"
		}
		if i, ok := index[name]; ok {
			return "n" + strconv.Itoa(i)
		}
		return "u" + strconv.Itoa(slices.Index(undeclared, name))
	}
	for _, e := range g.Edges {
		from, to := id(e.From), id(e.To)
		if e.When == nil {
			fmt.Fprintf(&b, "    %s --> %s\n", from, to)
			continue
		}
		fmt.Fprintf(&b, "    %s -->|\"%s\"| %s\n", from, mermaidText(edgeLabel(e.When)), to)
	}
	return b.String()
}

// edgeLabel writes a predicate for people, as the diagram labels its edge:
// the channel, the operator and the literal as JSON, e.g. intent = "buy",
// intent != "buy", n > 2, n < 3, x in ["a", 1], items is truthy, items is
// falsy. The channel is written as mermaidName writes names; number
// literals keep their document text.
func edgeLabel(p *spec.Predicate) string {
	ch := mermaidName(p.Channel)
	switch p.Op {
	case spec.OpEq:
		return ch + " = " + literalText(p.Value)
	case spec.OpNeq:
		return ch + " != " + literalText(p.Value)
	case spec.OpGt:
		return ch + " > " + literalText(p.Value)
	case spec.OpLt:
		return ch + " < " + literalText(p.Value)
	case spec.OpIn:
		parts := make([]string, len(p.Values))
		for i, l := range p.Values {
			parts[i] = literalText(l)
		}
		return ch + " in [" + strings.Join(parts, ", ") + "]"
	case spec.OpTruthy:
		if p.Value.Bool {
			return ch + " is truthy"
		}
		return ch + " is falsy"
	}
	// Only a graph built in Go can get here; say what it holds.
	return ch + " " + jsonQuote(string(p.Op)) + " " + literalText(p.Value)
}

// predicateText writes a predicate for the doc comments of generated code:
// channel, operator and literal (strings Go-quoted). The generated goldens
// depend on its exact output; the diagram uses edgeLabel.
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

// jsonLit writes a literal for predicateText: strings Go-quoted.
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

// literalText writes a literal as JSON text, numbers as the document wrote
// them.
func literalText(l spec.Literal) string {
	switch l.Kind {
	case spec.LitString:
		return jsonQuote(l.Str)
	case spec.LitNumber:
		return l.Num
	case spec.LitBool:
		return strconv.FormatBool(l.Bool)
	}
	return "null"
}

// mermaidName writes a node id, node type or channel name: as it is when it
// is plain, else as a JSON string, so that no two names look alike.
func mermaidName(s string) string {
	if plainName(s) {
		return s
	}
	return jsonQuote(s)
}

// plainName reports whether s is non-empty, valid UTF-8 and made of
// printable characters other than spaces, '"' and '\'.
func plainName(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '"' || r == '\\' || r == ' ' || !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// jsonQuote writes s as a JSON string that shows every character that is
// not visibly itself as an escape: '"', '\', control characters (as \n,
// \t... or \u00XX), and invisible or format characters such as U+200B,
// U+2028 or U+202E (as \uXXXX, with surrogate pairs above U+FFFF). Invalid
// UTF-8 (possible only in a graph built in Go) becomes \ufffd.
func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r == ' ' || (unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)) {
				b.WriteRune(r) // includes U+FFFD for invalid UTF-8
				continue
			}
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// utf16Pair splits a rune above U+FFFF into its UTF-16 surrogates.
func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// mermaidText escapes s for the inside of a quoted Mermaid label. Mermaid
// turns #name; and #number; into the HTML entity &name; or &#number;, so
// each character below is written that way:
//
//	"          would end the label
//	#          would start an entity code
//	%          %% starts a comment, %%{...}%% a directive
//	:          Mermaid rewrites "style ...:...#...;" text before parsing
//	< > &      HTML markup and entities
//	| `        edge label delimiters and Markdown strings
//	ﬂ ¶        Mermaid's internal entity markers ("ﬂ°", "¶ß")
//
// Any character that is still not printable (none, after mermaidName and
// jsonQuote) is written as a numeric entity too, so no line break or
// control character ever reaches the diagram's text.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '#', '%', ':', '|', '`', 'ﬂ', '¶':
			fmt.Fprintf(&b, "#%d;", r)
		default:
			if r != ' ' && (!unicode.IsPrint(r) || unicode.Is(unicode.Cf, r)) {
				fmt.Fprintf(&b, "#%d;", r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
