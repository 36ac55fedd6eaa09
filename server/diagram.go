package server

import (
	"errors"
	"net/http"

	"github.com/ilmek-go/ilmek/dot"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
)

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
	var expand bool
	switch r.URL.Query().Get("subgraphs") {
	case "", "collapse":
	case "expand":
		expand = true
	default:
		return badRequest(`subgraphs must be "collapse" (the default: a subgraph node is a box, as MODEL.md §9.1 draws any node) or "expand" (each child drawn inside its node, marked where it stands)`)
	}
	if format == "svg" && s.cfg.RenderSVG == nil {
		return errf(http.StatusNotImplemented, "not-implemented", "Not implemented",
			`this server draws no SVG (Config.RenderSVG is nil); ask for format "mermaid" or "dot"`)
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
	if id := r.URL.Query().Get("checkpoint"); id != "" {
		// Where the thread stood at an earlier checkpoint.
		cp, err := s.cfg.Checkpointer.Get(r.Context(), t.ID, id)
		if errors.Is(err, runtime.ErrNotFound) {
			return notFound("thread " + t.ID + " has no checkpoint " + id)
		}
		if err != nil {
			return err
		}
		tsp = &threadState{Checkpoint: cp, Open: cp.Pending}
	}
	text, mg, err := v.diagram(tsp, expand)
	if err != nil {
		return err
	}
	// The inbox's policy (and nosniff, on every response): an SVG opened
	// on its own runs no script and loads nothing.
	w.Header().Set("Content-Security-Policy", inboxCSP)
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
	text = dot.Diagram(mg, h)
	if format == "dot" {
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		_, err = w.Write([]byte(text))
		return err
	}
	svg, err := s.cfg.RenderSVG(r.Context(), text)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, err = w.Write(svg)
	return err
}
