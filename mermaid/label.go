package mermaid

import (
	"math"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// labelEscaper writes text for a quoted Mermaid label: '#' opens an entity
// code, so it is escaped too; quotes, angle brackets and backticks would
// otherwise end the string, open HTML, or make a markdown string; line
// breaks become spaces.
var labelEscaper = strings.NewReplacer(
	"#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;", "`", "#96;",
	"\r\n", " ", "\r", " ", "\n", " ",
)

func label(text string) string { return labelEscaper.Replace(text) }

// PredicateText is a predicate as a reader writes it, before label
// escaping: intent == "buy", intent != "buy", x in ["a", 3], n > 10,
// n < 2.5, truthy(x), not truthy(x). Literals are JSON as JavaScript's
// JSON.stringify writes them (numbers in their shortest form, 1e400 as
// null), so every implementation writes the same text.
func PredicateText(p *spec.Predicate) string {
	switch p.Op {
	case spec.OpEq:
		return p.Channel + " == " + literal(p.Value)
	case spec.OpNeq:
		return p.Channel + " != " + literal(p.Value)
	case spec.OpIn:
		parts := make([]string, len(p.Values))
		for i, l := range p.Values {
			parts[i] = literal(l)
		}
		return p.Channel + " in [" + strings.Join(parts, ", ") + "]"
	case spec.OpGt:
		return p.Channel + " > " + literal(p.Value)
	case spec.OpLt:
		return p.Channel + " < " + literal(p.Value)
	case spec.OpTruthy:
		if p.Value.Kind == spec.LitBool && p.Value.Bool {
			return "truthy(" + p.Channel + ")"
		}
		return "not truthy(" + p.Channel + ")"
	}
	return p.Channel
}

// literal writes l as JSON.stringify writes the value it decodes to.
func literal(l spec.Literal) string {
	switch l.Kind {
	case spec.LitString:
		return jsString(l.Str)
	case spec.LitNumber:
		f, err := strconv.ParseFloat(l.Num, 64)
		if err != nil && !math.IsInf(f, 0) {
			return "null"
		}
		return jsNumber(f)
	case spec.LitBool:
		return strconv.FormatBool(l.Bool)
	}
	return "null"
}

// jsNumber writes f as JavaScript's Number#toString (and JSON.stringify)
// does: non-finite numbers are null, -0 is 0, decimal notation from 1e-7 up
// to 1e21, exponent notation ("1e+21", "1.5e-7") outside it.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "null"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e-7 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+21, 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits
}

// jsString writes s as JSON.stringify does: quotes and backslashes escaped,
// \b \f \n \r \t by name, other control characters as \u00xx, everything
// else (U+2028 among it) as it is; invalid UTF-8 as U+FFFD.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				const hex = "0123456789abcdef"
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
