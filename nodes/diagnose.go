package nodes

import (
	"errors"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Diagnose builds every node of doc whose type reg holds, as FromSpec
// would, and reports each refusal as a diagnostic placed at the refused
// value (nodes[2].config.server, from a *ConfigError's or a
// *runtime.ConfigError's path) or, for other errors, at the node's type;
// it adds [Check]'s undeclared channels. FromSpec names the node but
// cannot place it (a factory sees the node, not the document), so a tool
// that checks documents against the application's registry calls
// Diagnose; nil means FromSpec will build every node Diagnose saw.
func Diagnose(doc *spec.Graph, reg runtime.Registry) spec.Diagnostics {
	var out spec.Diagnostics
	for i, n := range doc.Nodes {
		f := reg[n.Type]
		if f == nil {
			continue
		}
		_, err := f(n)
		if err == nil {
			continue
		}
		nodePath := spec.PathIndex("nodes", i)
		var ce *ConfigError
		var re *runtime.ConfigError
		switch {
		case errors.As(err, &ce):
			out = append(out, placed(doc, nodePath, ce.Path, "node "+quote(n.ID)+": "+ce.Path+" "+ce.Msg, ce.Fix))
		case errors.As(err, &re):
			for _, p := range re.Problems {
				out = append(out, placed(doc, nodePath, p.Path, "node "+quote(n.ID)+": "+p.Path+": "+p.Msg, "fix the stored config"))
			}
		default:
			out = append(out, placed(doc, nodePath, "type", "node "+quote(n.ID)+": "+err.Error(), ""))
		}
	}
	// Check's diagnostics, but for a value a factory refused already (an
	// empty channel name both report).
	refused := make(map[string]bool, len(out))
	for _, d := range out {
		refused[d.Path] = true
	}
	for _, d := range Check(doc) {
		if !refused[d.Path] {
			out = append(out, d)
		}
	}
	return out
}

// placed is an error diagnostic at the node's value rel (a path from the
// node), or at the nearest part of it the document holds.
func placed(doc *spec.Graph, nodePath, rel, msg, hint string) spec.Diagnostic {
	path := nodePath + "." + rel
	pos := doc.Pos(path)
	for pos == (spec.Pos{}) && strings.Contains(rel, ".") {
		rel = rel[:strings.LastIndex(rel, ".")]
		path = nodePath + "." + rel
		pos = doc.Pos(path)
	}
	if pos == (spec.Pos{}) {
		path = spec.PathKey(nodePath, "type")
		pos = doc.Pos(path)
	}
	return spec.Diagnostic{Severity: spec.SeverityError, Pos: pos, Path: path, Message: msg, Hint: hint}
}
