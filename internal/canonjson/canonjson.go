// Package canonjson writes JSON values in canonical form, the form the
// ilmek reference's shared conformance data is compared in: object keys
// sorted, no insignificant white space, numbers as written.
package canonjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Canonical returns the canonical form of the JSON text data.
func Canonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("canonjson: more than one JSON value")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Of returns the canonical form of v's JSON encoding.
func Of(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return Canonical(b.Bytes())
}
