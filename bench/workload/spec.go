package workload

import (
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// Spec returns the workload's document, decoded and checked.
func (w Workload) Spec() (*spec.Graph, error) {
	if err := w.Valid(); err != nil {
		return nil, err
	}
	g, diags := spec.Decode(w.String()+".json", w.json())
	if err := diags.Err(); err != nil {
		return nil, fmt.Errorf("workload %s: %w", w, err)
	}
	return g, nil
}

// SpecJSON returns the workload's document in canonical form: the file
// ilmekgen compiles.
func (w Workload) SpecJSON() ([]byte, error) {
	g, err := w.Spec()
	if err != nil {
		return nil, err
	}
	return g.Encode(), nil
}

// SpecName is the document's name: the workload's name, or its kind when
// the document does not depend on N (fanoutsend reads N from its input, so
// one generated package serves every size).
func (w Workload) SpecName() string {
	if w.Kind == "fanoutsend" {
		return w.Kind
	}
	return w.String()
}

// json writes the document compactly; Spec decodes and checks it.
func (w Workload) json() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"name":%q,"channels":{"items":{"reducer":"append"},"counter":{"reducer":"last_write"}},`, w.SpecName())
	var nodes, edges []string
	node := func(id, typ string) { nodes = append(nodes, fmt.Sprintf(`{"id":%q,"type":%q}`, id, typ)) }
	edge := func(from, to string) { edges = append(edges, fmt.Sprintf(`{"from":%q,"to":%q}`, from, to)) }
	switch w.Kind {
	case "chain":
		prev := spec.Start
		for i := range w.N {
			id := fmt.Sprintf("n%d", i)
			node(id, "push")
			edge(prev, id)
			prev = id
		}
		edge(prev, spec.End)
	case "fanout":
		node("fan", "noop")
		edge(spec.Start, "fan")
		for i := range w.N {
			id := fmt.Sprintf("w%d", i)
			node(id, "push")
			edge("fan", id)
			edge(id, "join")
		}
		node("join", "noop")
		edge("join", spec.End)
	case "loop":
		node("inc", "inc")
		edge(spec.Start, "inc")
		edges = append(edges, fmt.Sprintf(`{"from":"inc","to":"inc","when":{"channel":"counter","lt":%d}}`, w.N))
	case "fanoutsend":
		node("fan", "fan")
		node("worker", "worker")
		node("join", "noop")
		edge(spec.Start, "fan")
		edge("worker", "join")
		edge("join", spec.End)
	}
	fmt.Fprintf(&b, `"nodes":[%s],"edges":[%s]}`, strings.Join(nodes, ","), strings.Join(edges, ","))
	return []byte(b.String())
}

// Index is the number at the end of a node id ("n12" → 12, "w3" → 3): the
// value a push node appends.
func Index(id string) (int, error) {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	n := 0
	if i == len(id) {
		return 0, fmt.Errorf("node id %q does not end in a number", id)
	}
	for _, c := range id[i:] {
		n = n*10 + int(c-'0')
	}
	return n, nil
}
