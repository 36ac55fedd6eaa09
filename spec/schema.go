package spec

import _ "embed"

// schemaJSON is schema.json, the JSON Schema of the document.
//
//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of a spec document, for
// editors and visual builders: point a document's editor at it, or validate
// a document with it before storing it. `ilmekgen schema` prints it.
//
// The schema checks every member's kind, the reducers, the reserved node
// ids, the predicates (exactly one operator with a literal of its kind, no
// other member), the entry edge and the numbers of nodes and edges
// (DefaultLimits), and allows members this version does not know, as Decode
// does (it keeps them and warns). It cannot express the rules that relate
// one part of the document to another or to its text — a predicate's
// channel must be declared, edge endpoints must name declared nodes, node
// ids must be unique, no object repeats a key, the text is UTF-8 without
// lone surrogates, and the limits on size and nesting depth — so Decode
// remains the authority: a document the schema refuses, Decode (with
// DefaultLimits) refuses too; a document the schema accepts, Decode may
// still refuse for one of those reasons. The schema's description lists
// them; the tests check the agreement on every document of the
// repository's testdata.
//
// Schema returns a new copy on every call; the caller may modify it.
func Schema() []byte {
	return append([]byte(nil), schemaJSON...)
}
