package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
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
				for _, d := range configDiagnostics(g, i, err) {
					rep.add(d)
				}
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

// configDiagnostics places the error a node's factory returned for node i
// of g. A *runtime.ConfigError (runtime.DecodeConfig's: a value of the
// wrong kind, a key the config type does not take, a number out of range)
// is one diagnostic per refused value, at its path, worded for the person
// filling the node's form rather than with the Go type's names; an
// encoding/json error is worded the same way; any other error is the
// factory's own words.
func configDiagnostics(g *spec.Graph, i int, err error) []spec.Diagnostic {
	n := g.Nodes[i]
	at := spec.PathIndex("nodes", i) + ".config"
	if n.Config == nil {
		at = spec.PathIndex("nodes", i)
	}
	diag := func(path, msg, hint string) spec.Diagnostic {
		pos := g.Pos(path)
		if pos.Line == 0 {
			path, pos = at, g.Pos(at)
		}
		return spec.Diagnostic{Severity: spec.SeverityError, Pos: pos, Path: path, Message: msg, Hint: hint}
	}
	const fix = "fix it in the node's config form"
	var (
		ce  *runtime.ConfigError
		ute *json.UnmarshalTypeError
		syn *json.SyntaxError
	)
	switch {
	case errors.As(err, &ce) && len(ce.Problems) > 0:
		out := make([]spec.Diagnostic, 0, len(ce.Problems))
		for _, p := range ce.Problems {
			msg, hint := configProblem(p)
			if hint == "" {
				hint = fix
			}
			out = append(out, diag(spec.PathIndex("nodes", i)+"."+p.Path, fmt.Sprintf("node %q: %s", n.ID, msg), hint))
		}
		return out
	case errors.As(err, &ute) && ute.Field != "":
		return []spec.Diagnostic{diag(at+"."+ute.Field, fmt.Sprintf("node %q: config.%s must be %s, not %s", n.ID, ute.Field, goKind(ute.Type), jsonKind(ute.Value)), fix)}
	case errors.As(err, &ute):
		return []spec.Diagnostic{diag(at, fmt.Sprintf("node %q: its config must be %s, not %s", n.ID, goKind(ute.Type), jsonKind(ute.Value)), fix)}
	case errors.As(err, &syn):
		return []spec.Diagnostic{diag(at, fmt.Sprintf("node %q: its config is not JSON: %v", n.ID, syn), fix)}
	}
	return []spec.Diagnostic{diag(at, fmt.Sprintf("node %q: %s", n.ID, shortTypes(err.Error())), fix)}
}

// qualifiedRE is a Go type's name with its import path.
var qualifiedRE = regexp.MustCompile(`\b(?:[\w.-]+/)+[\w-]+\.(\w+)`)

// configProblem words one refused value of a config from its parts
// (runtime.ConfigProblem's Kind and the fields it names): the message,
// and a hint when there is a better one than the form's.
func configProblem(p runtime.ConfigProblem) (msg, hint string) {
	switch p.Kind {
	case runtime.ConfigWrongKind:
		want := p.Want
		if want == "a number" && p.Min != "" {
			want = "a whole number"
		}
		return fmt.Sprintf("%s must be %s, not %s", p.Path, want, p.Got), ""
	case runtime.ConfigUnknownKey:
		// The setting's object: the path without its last key.
		parent := strings.TrimSuffix(strings.TrimSuffix(p.Path, spec.PathKey("", p.Key)), ".")
		if parent == p.Path || parent == "" {
			parent = "config"
		}
		msg = fmt.Sprintf("%s has a setting %q, which the node's type does not take", parent, p.Key)
		switch {
		case suggest.Closest(p.Key, p.Keys) != "":
			hint = fmt.Sprintf("did you mean %q? Rename it in the node's config form", suggest.Closest(p.Key, p.Keys))
		case len(p.Keys) > 0:
			hint = "remove it in the node's config form; the type takes " + quoteList(p.Keys)
		default:
			hint = "remove it in the node's config form; the type takes no settings"
		}
		return msg, hint
	case runtime.ConfigOutOfRange:
		if p.Min != "" {
			return fmt.Sprintf("%s must be a whole number from %s to %s, not %s", p.Path, p.Min, p.Max, p.Got), ""
		}
		return fmt.Sprintf("%s is %s, a number too large for it", p.Path, p.Got), ""
	}
	return p.Path + ": " + shortTypes(p.Msg), ""
}

// shortTypes drops the import paths from the Go type names in s
// ("github.com/acme/shop/config.LLM" becomes "LLM").
func shortTypes(s string) string {
	return qualifiedRE.ReplaceAllString(s, "$1")
}
