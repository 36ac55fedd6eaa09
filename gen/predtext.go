package gen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/ilmek-go/ilmek/spec"
)

// This file writes predicates as text for the comments of generated code.

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
