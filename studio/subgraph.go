package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

// Subgraph nodes: a node of type "subgraph" (spec.SubgraphType) runs
// another graph to its end. The runtime provides the type
// (runtime.WithSubgraphs hands it the children), so the studio lists it
// in the palette whether or not Config.Registry names it, and checks such
// a node against the children a service would be given: the published
// versions of the repository's documents, by the graph name inside each
// (what runtime.WithSubgraphs keys them by). An application that
// registers a "subgraph" factory of its own replaces all of this, as it
// does in runtime.FromSpec.

// Child is one graph a subgraph node may run, as GET api/subgraphs lists
// it: the latest published version of a document the principal may view.
type Child struct {
	// Graph is the graph's name inside the document, what a subgraph
	// node's config.graph names.
	Graph string `json:"graph"`
	// Document and Name are the studio document's id and name.
	Document string `json:"document"`
	Name     string `json:"name"`
	// Version and Fingerprint are the published version's number and
	// fingerprint (what config.fingerprint pins).
	Version     int    `json:"version"`
	Fingerprint string `json:"fingerprint"`
	// Channels are the child's channels with their reducers, in the
	// document's order, for the node's channel maps.
	Channels []ChildChannel `json:"channels"`
}

// ChildChannel is one channel of a Child.
type ChildChannel struct {
	Name    string `json:"name"`
	Reducer string `json:"reducer"`
}

// children is the set of published graphs a check runs against.
type children struct {
	list []Child
	docs map[string]*spec.Graph // by graph name
}

// views returns what spec.CheckSubgraphs needs of the children g runs,
// at any depth (only those: a view costs the child's fingerprint).
func (c *children) views(g *spec.Graph) map[string]spec.SubgraphChild {
	return spec.SubgraphChildren(c.closure(g)...)
}

// closure returns the published graphs g runs as subgraphs, at any depth.
func (c *children) closure(g *spec.Graph) []*spec.Graph {
	var set []*spec.Graph
	seen := map[string]bool{}
	var walk func(x *spec.Graph)
	walk = func(x *spec.Graph) {
		for _, name := range subgraphRefs(x) {
			if seen[name] {
				continue
			}
			seen[name] = true
			if d := c.docs[name]; d != nil {
				set = append(set, d)
				walk(d)
			}
		}
	}
	walk(g)
	return set
}

// pin gives each listed child that runs subgraphs itself the fingerprint
// the runtime versions it by (spec.PinnedFingerprints: its document with
// its own children pinned), so a pin copied from the form matches; a
// child without subgraph nodes keeps its document's fingerprint.
func (c *children) pin() {
	for i, ch := range c.list {
		d := c.docs[ch.Graph]
		if len(subgraphRefs(d)) == 0 {
			continue
		}
		set := append(c.closure(d), d)
		c.list[i].Fingerprint = spec.PinnedFingerprints(set...)[ch.Graph]
	}
}

// names returns the graph names of the set, sorted.
func (c *children) names() []string {
	out := make([]string, 0, len(c.list))
	for _, ch := range c.list {
		out = append(out, ch.Graph)
	}
	slices.Sort(out)
	return out
}

// childCache keeps each document's decoded published version, so a check
// reads only the document list once a version has been seen.
type childCache struct {
	mu      sync.Mutex
	entries map[string]cachedChild // by document id
}

type cachedChild struct {
	name    string
	version int
	child   Child
	graph   *spec.Graph
}

// subgraphOwn reports whether the application registers a "subgraph"
// factory of its own, which then builds such nodes as any other type.
func (s *Studio) subgraphOwn() bool {
	_, own := s.cfg.Registry[spec.SubgraphType]
	return own
}

// children returns the published versions of the documents p may view,
// each under its graph name; of two documents whose graphs have the same
// name, the first by document name is kept, as the one a service would
// be handed.
func (s *Studio) children(ctx context.Context, p server.Principal) (*children, error) {
	out := &children{list: []Child{}, docs: map[string]*spec.Graph{}}
	if s.subgraphOwn() {
		return out, nil
	}
	all, err := s.cfg.Repository.List(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, d := range all {
		seen[d.ID] = true
		if d.Published == 0 || s.cfg.Access(ctx, p, DocumentRef{ID: d.ID, Name: d.Name, Owner: d.Owner}, ActionView) != nil {
			continue
		}
		e, err := s.published(ctx, d)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		if e.graph == nil || out.docs[e.child.Graph] != nil {
			continue
		}
		out.list = append(out.list, e.child)
		out.docs[e.child.Graph] = e.graph
	}
	s.kids.mu.Lock()
	for id := range s.kids.entries {
		if !seen[id] {
			delete(s.kids.entries, id)
		}
	}
	s.kids.mu.Unlock()
	out.pin()
	return out, nil
}

// published returns document d's latest published version, decoded,
// from the cache when it holds that version.
func (s *Studio) published(ctx context.Context, d Document) (cachedChild, error) {
	s.kids.mu.Lock()
	e, ok := s.kids.entries[d.ID]
	s.kids.mu.Unlock()
	if ok && e.version == d.Published && e.name == d.Name {
		return e, nil
	}
	v, err := s.cfg.Repository.Published(ctx, d.Name)
	if err != nil {
		return cachedChild{}, err
	}
	e = cachedChild{name: d.Name, version: v.Number}
	g, diags := spec.Decode(d.Name+".json", v.Body)
	if g == nil || diags.HasErrors() {
		// Published versions have no errors; one that the spec package no
		// longer accepts cannot be a child.
		s.log.Warn("studio: a published version does not decode; it is not offered as a subgraph", "document", d.Name, "version", v.Number, "err", diags.Err())
	} else {
		e.graph = g
		e.child = Child{Graph: g.Name, Document: d.ID, Name: d.Name, Version: v.Number, Fingerprint: v.Fingerprint, Channels: []ChildChannel{}}
		for _, c := range g.Channels {
			e.child.Channels = append(e.child.Channels, ChildChannel{Name: c.Name, Reducer: string(c.Kind())})
		}
	}
	s.kids.mu.Lock()
	if s.kids.entries == nil {
		s.kids.entries = map[string]cachedChild{}
	}
	s.kids.entries[d.ID] = e
	s.kids.mu.Unlock()
	return e, nil
}

// checkSubgraphs adds the diagnostics of g's subgraph nodes against kids
// (spec.CheckSubgraphs: an unknown child, a pin the child does not
// match, a channel either side does not declare, reducers that change
// the mapping's meaning, a cycle), with the studio's hint for an unknown
// child.
func (rep *Report) checkSubgraphs(g *spec.Graph, kids *children) {
	for _, d := range spec.CheckSubgraphs(g, kids.views(g)) {
		if strings.HasSuffix(d.Path, ".config.graph") && strings.Contains(d.Message, "is not registered") {
			var cfg spec.SubgraphConfig
			_ = json.Unmarshal(g.Nodes[nodeIndex(d.Path)].Config, &cfg)
			d.Message = fmt.Sprintf("node %q: graph %q is not a published graph of the studio", g.Nodes[nodeIndex(d.Path)].ID, cfg.Graph)
			d.Hint = "publish the child document first, then pick it in the node's form"
			if m := suggest.Closest(cfg.Graph, kids.names()); m != "" {
				d.Hint = fmt.Sprintf("did you mean %q?", m)
			}
		}
		rep.add(d)
	}
}

// nodeIndex reads i of a path "nodes[i]...".
func nodeIndex(path string) int {
	n, _ := index(strings.TrimPrefix(path, "nodes["))
	return n
}

// subgraphRefs returns the graph names g's subgraph nodes run.
func subgraphRefs(g *spec.Graph) []string {
	var out []string
	for _, n := range g.Nodes {
		var cfg spec.SubgraphConfig
		if n.Type == spec.SubgraphType && json.Unmarshal(n.Config, &cfg) == nil && cfg.Graph != "" {
			out = append(out, cfg.Graph)
		}
	}
	return out
}

// build builds doc with Config.Registry and, unless the application
// registers "subgraph" itself, the children its subgraph nodes run
// (at any depth) built from kids, as a service given them with
// runtime.WithSubgraphs would.
func (s *Studio) build(doc *spec.Graph, kids *children) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	if s.subgraphOwn() {
		return runtime.FromSpec(doc, s.cfg.Registry)
	}
	built := map[string]runtime.Child{}
	var add func(g *spec.Graph, path []string) (*runtime.Graph[runtime.Values, runtime.Values], error)
	add = func(g *spec.Graph, path []string) (*runtime.Graph[runtime.Values, runtime.Values], error) {
		var opts []runtime.Option
		for _, name := range subgraphRefs(g) {
			c, ok := built[name]
			if !ok {
				child := kids.docs[name]
				if child == nil || slices.Contains(path, name) {
					continue // FromSpec names the unknown child or the cycle
				}
				b, err := add(child, slices.Concat(path, []string{name}))
				if err != nil {
					return nil, fmt.Errorf("subgraph %q: %w", name, err)
				}
				c, built[name] = b, b
			}
			opts = append(opts, runtime.WithSubgraphs(c))
		}
		return runtime.FromSpec(g, s.cfg.Registry, opts...)
	}
	return add(doc, []string{doc.Name})
}

// listSubgraphs answers the graphs a subgraph node may run.
func (s *Studio) listSubgraphs(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	kids, err := s.children(r.Context(), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"children": kids.list})
}
