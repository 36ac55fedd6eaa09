package spec

import (
	"bytes"
	"fmt"
)

// Equal reports whether a and b describe the same document: whether their
// encodings are JSON-value-equal (see JSONEqual). Two nil graphs are equal; a
// nil graph equals no other.
func Equal(a, b *Graph) bool {
	if a == nil || b == nil {
		return a == b
	}
	eq, err := JSONEqual(a.Encode(), b.Encode())
	return err == nil && eq
}

// JSONEqual reports whether the JSON texts a and b hold the same value:
// object members compare by key whatever their order, numbers by their exact
// decimal value (1, 1.0 and 1e0 are equal; so are 12345678901234567891 and
// 1.2345678901234567891e19, which float64 would confuse with neighbours),
// strings by the characters they decode to, arrays element by element. It
// returns an error when either text is not one well-formed JSON value, holds
// an object with a repeated key (whose value JSON leaves undefined), or nests
// deeper than 10000 levels. Strings must be UTF-8 without lone surrogate
// escapes, as Decode requires.
func JSONEqual(a, b []byte) (bool, error) {
	ca, err := canonical(a, true)
	if err != nil {
		return false, fmt.Errorf("spec: JSONEqual: first text: %s at offset %d", err.msg, err.off)
	}
	cb, err := canonical(b, true)
	if err != nil {
		return false, fmt.Errorf("spec: JSONEqual: second text: %s at offset %d", err.msg, err.off)
	}
	return bytes.Equal(ca, cb), nil
}
