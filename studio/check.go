package studio

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

// Diagnostic is one problem of a document, placed: its JSON path, line
// and column, and the node or edge it is about, so the page can show it
// there.
type Diagnostic struct {
	// Severity is "error" (refuses publishing) or "warning".
	Severity string `json:"severity"`
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	Col      int    `json:"col,omitempty"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	// Node is the id of the node the diagnostic is about, if any.
	Node string `json:"node,omitempty"`
	// Edge is the index of the edge it is about, if any (-1: none).
	Edge int `json:"edge"`
}

// Report is what checking a document finds.
type Report struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Errors counts the diagnostics that refuse publishing.
	Errors int `json:"errors"`
	// Canonical is the document's canonical form (spec.Graph.Encode),
	// Fingerprint its version identity and Mermaid its §9.1 diagram; all
	// three are empty when the document does not decode.
	Canonical   string `json:"canonical,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Mermaid     string `json:"mermaid,omitempty"`

	graph *spec.Graph
}

// Check checks a document as `ilmekgen check` does (spec.Decode: syntax,
// members, validation with did-you-mean hints) and, when it decodes,
// builds each node with its type's factory of Config.Registry, so a config
// the factory's DecodeConfig refuses is an error on that node, and checks
// each "subgraph" node against the published versions p may view, as
// runtime.FromSpec checks it against the children runtime.WithSubgraphs
// hands it (spec.CheckSubgraphs: an unknown child, a fingerprint pin the
// child does not match, a channel either graph does not declare). The
// file name is used in positions.
func (s *Studio) Check(ctx context.Context, p server.Principal, file string, src []byte) (Report, error) {
	kids, err := s.children(ctx, p)
	if err != nil {
		return Report{}, err
	}
	return s.check(file, src, kids), nil
}

// check is Check against a given set of children.
func (s *Studio) check(file string, src []byte, kids *children) Report {
	var rep Report
	g, diags := spec.Decode(file, src)
	for _, d := range diags {
		rep.add(d)
	}
	if g != nil {
		own := s.subgraphOwn()
		for i, n := range g.Nodes {
			if n.Type == spec.SubgraphType && !own {
				continue // checked below, as runtime.FromSpec does
			}
			f, ok := s.cfg.Registry[n.Type]
			if !ok {
				path := spec.PathIndex("nodes", i) + ".type"
				names := make([]string, 0, len(s.cfg.Registry))
				for k := range s.cfg.Registry {
					names = append(names, k)
				}
				if !own {
					names = append(names, spec.SubgraphType)
				}
				hint := "use a type of the palette"
				if m := suggest.Closest(n.Type, names); m != "" {
					hint = fmt.Sprintf("did you mean %q?", m)
				}
				rep.add(spec.Diagnostic{Severity: spec.SeverityError, Pos: g.Pos(path), Path: path,
					Message: fmt.Sprintf("node %q has type %q, which the application does not register", n.ID, n.Type), Hint: hint})
				continue
			}
			if _, err := f(n); err != nil {
				path := spec.PathIndex("nodes", i) + ".config"
				if n.Config == nil {
					path = spec.PathIndex("nodes", i)
				}
				rep.add(spec.Diagnostic{Severity: spec.SeverityError, Pos: g.Pos(path), Path: path,
					Message: fmt.Sprintf("node %q: %v", n.ID, err), Hint: "fix the node's config in its form"})
			}
		}
		if !own {
			rep.checkSubgraphs(g, kids)
		}
		rep.graph = g
		rep.Canonical = string(g.Encode())
		rep.Fingerprint = g.Fingerprint()
		if m, err := mermaid.Spec(g, mermaid.Options{Types: true}); err == nil {
			rep.Mermaid = m
		}
	}
	place(src, rep.Diagnostics)
	if rep.Diagnostics == nil {
		rep.Diagnostics = []Diagnostic{}
	}
	return rep
}

func (rep *Report) add(d spec.Diagnostic) {
	sev := "warning"
	if d.Severity == spec.SeverityError {
		sev = "error"
		rep.Errors++
	}
	rep.Diagnostics = append(rep.Diagnostics, Diagnostic{Severity: sev, Path: d.Path, Line: d.Pos.Line, Col: d.Pos.Col,
		Message: d.Message, Hint: d.Hint, Edge: -1})
}

// place sets Node and Edge of each diagnostic whose path starts in
// nodes[i] or edges[i], reading ids off the document leniently (it may
// not decode).
func place(src []byte, ds []Diagnostic) {
	var doc struct {
		Nodes []struct {
			ID string `json:"id"`
		} `json:"nodes"`
	}
	_ = json.Unmarshal(src, &doc)
	for i := range ds {
		p := ds[i].Path
		switch {
		case strings.HasPrefix(p, "nodes["):
			if n, ok := index(p[len("nodes["):]); ok && n < len(doc.Nodes) {
				ds[i].Node = doc.Nodes[n].ID
			}
		case strings.HasPrefix(p, "edges["):
			if n, ok := index(p[len("edges["):]); ok {
				ds[i].Edge = n
			}
		}
	}
}

// index reads the number of "12]..." .
func index(s string) (int, bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:end])
	return n, err == nil && n >= 0
}
