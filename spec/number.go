package spec

import (
	"math/big"
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
