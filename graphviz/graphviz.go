// Package graphviz lays DOT diagrams (package dot) out as SVG with
// Graphviz, compiled to WebAssembly and run in process
// (github.com/goccy/go-graphviz): no graphviz binary, no cgo. It is the
// server's SVG renderer, kept apart so that a program that does not draw
// SVG does not compile Graphviz, its WebAssembly runtime and its image
// libraries:
//
//	srv, err := server.New(server.Config{
//		...
//		RenderSVG: graphviz.New().SVG,
//	})
package graphviz

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	gv "github.com/goccy/go-graphviz"
)

// Renderer lays DOT out as SVG. Its Graphviz instance is made on first use
// and serves one call at a time; a Renderer is safe for concurrent use.
type Renderer struct {
	mu sync.Mutex
	gv *gv.Graphviz
}

// New returns a Renderer.
func New() *Renderer { return &Renderer{} }

// SVG lays dot out and returns the <svg> element (without the XML
// declaration and DOCTYPE Graphviz writes before it, so that it can be
// inlined in HTML).
func (r *Renderer) SVG(ctx context.Context, dot string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gv == nil {
		g, err := gv.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("graphviz: starting Graphviz failed: %w", err)
		}
		r.gv = g
	}
	g, err := gv.ParseBytes([]byte(dot))
	if err != nil {
		return nil, fmt.Errorf("graphviz: Graphviz refused the DOT text: %w", err)
	}
	defer g.Close()
	var buf bytes.Buffer
	if err := r.gv.Render(ctx, g, gv.SVG, &buf); err != nil {
		return nil, fmt.Errorf("graphviz: laying the diagram out failed: %w", err)
	}
	out := buf.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	return out, nil
}

// Close frees the Graphviz instance; the Renderer makes a new one if used
// again.
func (r *Renderer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gv == nil {
		return nil
	}
	err := r.gv.Close()
	r.gv = nil
	return err
}
