// Package spec is the graph document of ilmek: the Go types of a spec, a
// strict decoder that reports every problem with its position, the
// validation rules, a canonical encoder and value equality. It executes
// nothing.
//
// A spec is one JSON object:
//
//	{
//	  "name": "support-agent",
//	  "channels": { "messages": { "reducer": "append" }, "intent": {} },
//	  "nodes": [ { "id": "agent", "type": "llm", "config": { "model": "m" } } ],
//	  "edges": [
//	    { "from": "__start__", "to": "agent" },
//	    { "from": "agent", "to": "__end__", "when": { "channel": "intent", "eq": "buy" } }
//	  ]
//	}
//
// Decode reads one and returns the Graph with its Diagnostics (errors refuse
// the document, warnings do not); Graph.Validate applies the same rules to a
// graph built in Go; Graph.Encode writes the canonical form; Equal and
// JSONEqual compare by JSON value. Decoding then encoding a valid document
// gives a JSON-value-equal document: absent members stay absent, null stays
// null, number literals keep their text and unknown members are kept (and
// warned about, since a misspelt "when" would silently unguard an edge).
//
// Diagnostics name places by JSON path: nodes[3].type, channels.intent.reducer,
// edges[2].when.eq, and channels["odd name"] for keys that are not plain
// words (see PathKey). Graph.Pos turns such a path into a file position, so
// that other tools can report their own findings at the document's lines.
package spec
