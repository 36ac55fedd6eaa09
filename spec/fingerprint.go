package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// FingerprintPrefix starts every fingerprint: it names the hash, so that a
// later format can use another one without two fingerprints ever being
// confused.
const FingerprintPrefix = "sha256:"

// Fingerprint returns the version identity of g: "sha256:" followed by the
// 64 lower-case hex digits of the SHA-256 of g's fingerprint form.
//
// The fingerprint form is the canonical encoding (see Encode) of g with
// every number written in its normalised value form (so 1, 1.0 and 1e0 are
// the same), object members sorted by key (so key order and formatting do
// not count), and these parts that carry no meaning for execution left out
// or written one way:
//
//   - every member whose name starts with "x-", at every level the document
//     format knows (the document, a channel, a node, an edge, a predicate),
//     and the top-level "$schema": moving a node on a canvas is not a new
//     version. Members inside a node's config are the node's own data and
//     always count, x- or not;
//   - a channel without a reducer is written with "last_write", the reducer
//     it folds with;
//   - a null or empty name is written as an absent one, and absent "channels",
//     "nodes" and "edges" as empty ones;
//   - a node's "goto" list is written sorted: it is a set of destinations.
//
// Everything else counts: the name, each channel and its reducer, each node's
// id, type, position in the node list (the reduce order), config and goto
// targets (they decide which gotos a run refuses), and each
// edge with its predicate, in order. Two documents with the same fingerprint
// run the same way with the same registry.
func (g *Graph) Fingerprint() string {
	sum := sha256.Sum256(g.FingerprintForm())
	return FingerprintPrefix + hex.EncodeToString(sum[:])
}

// FingerprintForm returns the bytes Fingerprint hashes (see Fingerprint), for
// a reader who wants to see why two fingerprints differ.
func (g *Graph) FingerprintForm() []byte {
	if g == nil {
		g = &Graph{}
	}
	c := g.Clone()
	c.src = nil
	c.Extra = dropExtensions(c.Extra, true)
	if c.Name == "" {
		c.NameKind = Absent
	}
	if c.Channels == nil {
		c.Channels = []Channel{}
	}
	if c.Nodes == nil {
		c.Nodes = []Node{}
	}
	if c.Edges == nil {
		c.Edges = []Edge{}
	}
	for i := range c.Channels {
		c.Channels[i].Reducer = c.Channels[i].Kind()
		c.Channels[i].Extra = dropExtensions(c.Channels[i].Extra, false)
	}
	for i := range c.Nodes {
		c.Nodes[i].Extra = dropExtensions(c.Nodes[i].Extra, false)
		slices.Sort(c.Nodes[i].Goto) // a set: its order means nothing
	}
	for i := range c.Edges {
		c.Edges[i].Extra = dropExtensions(c.Edges[i].Extra, false)
		if c.Edges[i].When != nil {
			c.Edges[i].When.Extra = dropExtensions(c.Edges[i].When.Extra, false)
		}
	}
	form, err := canonical(c.Encode(), true)
	if err != nil {
		// Encode writes well-formed JSON whatever g holds; keep the bytes
		// as they are should that ever not be so.
		return c.Encode()
	}
	return append(form, '\n')
}

// dropExtensions returns e without its "x-" members, and without "$schema"
// when top is set; nil when nothing is left.
func dropExtensions(e Extra, top bool) Extra {
	var out Extra
	for k, v := range e {
		if strings.HasPrefix(k, "x-") || (top && k == "$schema") {
			continue
		}
		if out == nil {
			out = Extra{}
		}
		out[k] = v
	}
	return out
}
