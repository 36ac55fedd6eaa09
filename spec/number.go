package spec

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// normNumber rewrites valid JSON number text into a form that is equal for
// two numbers exactly when their values are equal: "0" for every zero, else
// [-]0.DIGITSeEXP with no leading or trailing zero in DIGITS. It is exact for
// any length of mantissa or exponent (1.0, 1e0 and 10e-1 all give 0.1e1),
// without floating point and without expanding the exponent.
func normNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := intPart + frac
	point := len(intPart) // value = 0.digits × 10^(point+exp) once digits has no leading zero
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return "0"
	}
	e := new(big.Int)
	if exp != "" {
		exp = strings.TrimPrefix(exp, "+")
		if _, ok := e.SetString(exp, 10); !ok {
			e.SetInt64(0)
		}
	}
	e.Add(e, big.NewInt(int64(point)))
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString("0.")
	b.WriteString(digits)
	b.WriteByte('e')
	b.WriteString(e.String())
	return b.String()
}

// configNumber refuses a number of a node's config that does not fit
// float64 (one that rounds to zero fits): the document's one rule for
// config numbers, so every entry point that decodes a document
// (runtime.Load, ilmekgen check, gen, fmt and mermaid) refuses the same
// configs. A config reaches Go as float64 (an untyped value) or through a
// narrower bound type; a predicate literal is compared exactly (normNumber)
// and may be any number.
func (d *decoder) configNumber(off int, text string) {
	if _, err := strconv.ParseFloat(text, 64); err == nil {
		return
	}
	d.errAt(off, d.p.path(), fmt.Sprintf("%s does not fit float64", shortNumber(text)),
		"write a number between -1.7976931348623157e308 and 1.7976931348623157e308, the range of every config number")
}

// shortNumber writes the number s for a message, its middle elided when it
// is long.
func shortNumber(s string) string {
	if len(s) <= 40 {
		return s
	}
	return fmt.Sprintf("%s…%s (%d characters)", s[:20], s[len(s)-10:], len(s))
}
