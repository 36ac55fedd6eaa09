package gen

import (
	"fmt"
	"strings"

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
