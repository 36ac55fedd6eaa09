package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// Factory builds the function of one spec node of its registry type from
// the node (its id, type and raw JSON config). It runs once per node when the
// graph is built, for every node, reachable or not.
type Factory func(node spec.Node) (NodeFunc, error)

// Registry maps a node type of the document to its Factory.
type Registry map[string]Factory

// FromSpec builds a runnable graph from a document and a registry. The
// document must be valid (spec.Decode checks it) and every node's type must
// be in the registry. ToSpec of the result returns the document.
//
// The document's warnings are kept (Graph.Warnings), logged at Warn through
// WithLogger when one is set, and refused with WithWarningsAsErrors.
func FromSpec(doc *spec.Graph, reg Registry, opts ...Option) (*Graph[Values, Values], error) {
	diags := doc.Validate()
	if err := diags.Err(); err != nil {
		return nil, &SpecError{Msg: "runtime: invalid spec:\n" + err.Error(), Err: err}
	}
	var warnings spec.Diagnostics
	for _, d := range diags {
		if d.Severity == spec.SeverityWarning {
			warnings = append(warnings, d)
		}
	}
	var gc graphConfig
	for _, o := range opts {
		if o != nil {
			o.applyGraph(&gc)
		}
	}
	if _, own := reg[spec.SubgraphType]; !own {
		if err := checkSubgraphDoc(doc, gc.subgraphs).Err(); err != nil {
			return nil, &SpecError{Msg: "runtime: cannot build graph from spec:\n" + err.Error(), Err: errors.Join(err, ErrSubgraph)}
		}
	}
	b := NewBuilder(doc.Name)
	for _, c := range doc.Channels {
		b.Channel(c.Name, c.Kind())
	}
	// Each node's failure, placed at its node and kept whole, so a caller
	// matches a factory's own error (errors.Is, errors.As) through the
	// SpecError.
	var errs []error
	for _, n := range doc.Nodes {
		f, ok := reg[n.Type]
		if !ok && n.Type == spec.SubgraphType {
			if err := b.specSubgraph(n, gc.subgraphs); err != nil {
				errs = append(errs, fmt.Errorf("node %q (type %q): %w", n.ID, n.Type, err))
			}
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("node %q has type %q, which is not in the registry (registered: %s)", n.ID, n.Type, registered(reg)))
			continue
		}
		if f == nil {
			errs = append(errs, fmt.Errorf("node %q has type %q, whose registry entry is nil; register a Factory for it", n.ID, n.Type))
			continue
		}
		fn, err := f(n)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %q (type %q): %w", n.ID, n.Type, err))
			continue
		}
		b.TypedNode(n.ID, n.Type, nil, fn)
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		return nil, &SpecError{Msg: "runtime: cannot build graph from spec:\n\t" + strings.Join(msgs, "\n\t"), Err: errors.Join(errs...)}
	}
	for _, e := range doc.Edges {
		if e.When != nil {
			b.EdgeWhen(e.From, e.To, *e.When)
		} else {
			b.Edge(e.From, e.To)
		}
	}
	p, err := b.program()
	if err != nil {
		return nil, err
	}
	p.doc = doc.Clone()
	opts = append(slices.Clip(opts), graphOption(func(c *graphConfig) { c.warnings = warnings }))
	return newGraph[Values, Values](p, opts...)
}

// Load decodes a document and builds it with FromSpec; file names the
// document in diagnostics and in Graph.Warnings.
func Load(file string, data []byte, reg Registry, opts ...Option) (*Graph[Values, Values], error) {
	doc, diags := spec.Decode(file, data)
	if err := diags.Err(); err != nil {
		return nil, &SpecError{Msg: err.Error(), Err: err}
	}
	return FromSpec(doc, reg, opts...)
}

func registered(reg Registry) string {
	names := make([]string, 0, len(reg))
	for k := range reg {
		names = append(names, fmt.Sprintf("%q", k))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// DecodeConfig decodes a node's stored config into v (a pointer to a
// struct or map); an absent or null config leaves v as it is. It is as
// strict as ilmekgen is with a bound config type: a key no field accepts,
// a value of the wrong JSON kind and a number out of its type's range (an
// integer beyond int64 or a number beyond float64 where the type is any)
// are a *ConfigError with the generator's words.
func DecodeConfig(n spec.Node, v any) error {
	if len(n.Config) == 0 || string(n.Config) == "null" {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if err := checkConfig(n, rv.Type().Elem()); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(n.Config, v); err != nil {
		return fmt.Errorf("config of node %q (type %q): %w; fix the stored config or the type it decodes into", n.ID, n.Type, err)
	}
	return nil
}
