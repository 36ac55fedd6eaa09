package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// DOT writes a graph as Graphviz DOT with where a thread stands (h may be
// nil): nodes planned next are drawn with class "next", nodes waiting on a
// person with class "pending" and ⏸ before the name, as in the §9.1
// Mermaid diagram. Every node's SVG id is "node_" and its name.
func DOT(g mermaid.Graph, h *mermaid.Highlight) string {
	next, pending := map[string]bool{}, map[string]bool{}
	if h != nil {
		for _, n := range h.Next {
			next[n] = true
		}
		for _, n := range h.Pending {
			pending[n] = true
		}
	}
	var b strings.Builder
	b.WriteString("digraph G {\n  rankdir=TB;\n  bgcolor=\"transparent\";\n")
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#444444\", fontname=\"Helvetica\", fontsize=12];\n")
	b.WriteString("  edge [color=\"#444444\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  \"__start__\" [label=\"START\", shape=oval, id=\"node___start__\", class=\"terminal\"];\n")
	declared := map[string]bool{spec.Start: true, spec.End: true}
	node := func(name string) {
		if declared[name] {
			return
		}
		declared[name] = true
		label, attrs := name, ""
		switch {
		case pending[name]:
			label = "⏸ " + name
			attrs = ", class=\"pending\", fillcolor=\"#fde68a\", penwidth=2.5"
		case next[name]:
			attrs = ", class=\"next\", fillcolor=\"#bfdbfe\", penwidth=2.5"
		}
		fmt.Fprintf(&b, "  %s [label=%s, id=%s%s];\n", dotQuote(name), dotQuote(label), dotQuote("node_"+name), attrs)
	}
	for _, n := range g.Nodes {
		node(n.ID)
	}
	end := false
	var edges strings.Builder
	routers := 0
	edge := func(from, to, label string, dashed bool) {
		if to == spec.End {
			end = true
		}
		attrs := []string{}
		if label != "" {
			attrs = append(attrs, "label="+dotQuote(label))
		}
		if dashed {
			attrs = append(attrs, "style=dashed")
		}
		fmt.Fprintf(&edges, "  %s -> %s", dotQuote(from), dotQuote(to))
		if len(attrs) > 0 {
			fmt.Fprintf(&edges, " [%s]", strings.Join(attrs, ", "))
		}
		edges.WriteString(";\n")
	}
	for _, e := range g.Edges {
		for _, n := range []string{e.From, e.To} {
			if n != "" {
				node(n)
			}
		}
		switch e.Kind {
		case mermaid.Static:
			edge(e.From, e.To, "", false)
		case mermaid.Predicate:
			edge(e.From, e.To, mermaid.PredicateText(e.When), false)
		case mermaid.Guard:
			edge(e.From, e.To, "guard", true)
		case mermaid.Router:
			if e.Targets == nil {
				r := fmt.Sprintf("__router_%d__", routers)
				routers++
				fmt.Fprintf(&b, "  %s [label=\"?\", shape=diamond];\n", dotQuote(r))
				edge(e.From, r, "", true)
				continue
			}
			for _, t := range e.Targets {
				node(t)
				edge(e.From, t, "", true)
			}
		}
	}
	if end {
		b.WriteString("  \"__end__\" [label=\"END\", shape=oval, id=\"node___end__\", class=\"terminal\"];\n")
	}
	b.WriteString(edges.String())
	b.WriteString("}\n")
	return b.String()
}

// dotQuote quotes s as a DOT string whose text Graphviz shows as is.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// renderer lays DOT out to SVG with Graphviz (compiled to WebAssembly, run
// in process): one instance, made on first use, used by one call at a time.
type renderer struct {
	mu sync.Mutex
	gv *graphviz.Graphviz
}

func (r *renderer) svg(ctx context.Context, dot string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gv == nil {
		gv, err := graphviz.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("server: starting Graphviz: %w", err)
		}
		r.gv = gv
	}
	g, err := graphviz.ParseBytes([]byte(dot))
	if err != nil {
		return nil, fmt.Errorf("server: Graphviz refused the diagram's DOT: %w", err)
	}
	defer g.Close()
	var buf bytes.Buffer
	if err := r.gv.Render(ctx, g, graphviz.SVG, &buf); err != nil {
		return nil, fmt.Errorf("server: Graphviz failed to lay the diagram out: %w", err)
	}
	out := buf.Bytes()
	// Keep the <svg> element only: the XML declaration and DOCTYPE are
	// not wanted inline in HTML.
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	return out, nil
}

func (s *Server) diagram(w http.ResponseWriter, r *http.Request, p Principal) error {
	t, err := s.thread(r.Context(), p, r.PathValue("thread_id"), ActionRead)
	if err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "mermaid"
	}
	if format != "mermaid" && format != "svg" && format != "dot" {
		return badRequest(`format must be "mermaid" (the default), "svg" or "dot"`)
	}
	g := s.graphs[t.Graph]
	v, err := g.forThread(r.Context(), s.cfg.Checkpointer, t.ID)
	if err != nil {
		v = g.newest()
	}
	var tsp *threadState
	ts, err := v.thread(r.Context(), s.cfg.Checkpointer, t.ID)
	switch {
	case err == nil:
		tsp = &ts
	case !errors.Is(err, runtime.ErrNotFound):
		return err
	}
	text, mg, err := v.diagram(tsp)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	switch format {
	case "mermaid":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, err = w.Write([]byte(text))
		return err
	}
	var h *mermaid.Highlight
	if tsp != nil {
		h = highlight(tsp)
	}
	dot := DOT(mg, h)
	if format == "dot" {
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		_, err = w.Write([]byte(dot))
		return err
	}
	svg, err := s.render.svg(r.Context(), dot)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, err = w.Write(svg)
	return err
}
