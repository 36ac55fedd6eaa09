package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/ilmek-go/ilmek/spec"
)

// exitUnsafe is diff's status when a change is unsafe for paused or for new
// threads.
const exitUnsafe = 3

// errUnsafe means diff printed at least one unsafe change.
var errUnsafe = errors.New("unsafe changes")

// runDiff is "ilmekgen diff OLD NEW": it prints spec.Compare's changes, one
// per line (or one JSON document with --json), and returns errUnsafe when a
// change is unsafe for paused or new threads. With --subgraph (the
// children of NEW, and of OLD unless --old-subgraph gives OLD's), both
// documents are compared in the form the runtime versions them, every
// child pinned (spec.PinnedFingerprints), so a new child version is a
// changed config of the subgraph node that runs it.
func runDiff(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff")
	asJSON := fs.Bool("json", false, "print the changes as one JSON document")
	newChildren := fs.StringArray("subgraph", nil, "a child graph of NEW (and of OLD, unless --old-subgraph names it): NAME=SPEC (repeatable)")
	oldChildren := fs.StringArray("old-subgraph", nil, "a child graph of OLD: NAME=SPEC (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &usageError{"diff needs exactly two specs, OLD and NEW"}
	}
	old, _, err := loadSpec(fs.Arg(0), stderr)
	if err != nil {
		return err
	}
	nw, _, err := loadSpec(fs.Arg(1), stderr)
	if err != nil {
		return err
	}
	if len(*newChildren)+len(*oldChildren) > 0 {
		newSet, err := loadChildren(*newChildren, nil, stderr)
		if err != nil {
			return err
		}
		oldSet, err := loadChildren(*oldChildren, newSet, stderr)
		if err != nil {
			return err
		}
		old = pinChildren(old, oldSet)
		nw = pinChildren(nw, newSet)
	}
	changes := spec.Compare(old, nw)
	if *asJSON {
		writeDiffJSON(stdout, old, nw, changes)
	} else {
		writeDiffText(stdout, old, nw, changes)
	}
	for _, c := range changes {
		if c.Unsafe() {
			return errUnsafe
		}
	}
	return nil
}

func safeWord(unsafe bool) string {
	if unsafe {
		return "unsafe"
	}
	return "safe"
}

// writeDiffText writes a header with both fingerprints, then per change:
//
//	old.json:6:30 -> new.json:6:30: node-type-changed review: node "review" has type person instead of human
//	  paused threads: unsafe, new threads: unsafe: the node needs another implementation; …
func writeDiffText(w io.Writer, old, nw *spec.Graph, changes []spec.Change) {
	fmt.Fprintf(w, "old %s\nnew %s\n", old.Fingerprint(), nw.Fingerprint())
	if len(changes) == 0 {
		fmt.Fprintln(w, "no changes")
		return
	}
	unsafe := 0
	for _, c := range changes {
		fmt.Fprintf(w, "%s: %s %s: %s\n", placeText(c), c.Kind, c.Subject, c.Detail)
		fmt.Fprintf(w, "  paused threads: %s, new threads: %s", safeWord(c.UnsafePaused), safeWord(c.UnsafeNew))
		if c.Reason != "" {
			fmt.Fprintf(w, ": %s", c.Reason)
		}
		fmt.Fprintln(w)
		if c.Unsafe() {
			unsafe++
		}
	}
	fmt.Fprintf(w, "changes: %d, unsafe: %d\n", len(changes), unsafe)
}

// placeText is "old:l:c -> new:l:c", with "-" for a side that lacks the part.
func placeText(c spec.Change) string {
	side := func(path string, p spec.Pos) string {
		if path == "" {
			return "-"
		}
		return p.String()
	}
	return side(c.OldPath, c.OldPos) + " -> " + side(c.NewPath, c.NewPos)
}

// The --json form. Its member names are part of the command's interface.
type (
	diffJSON struct {
		Old     diffDoc      `json:"old"`
		New     diffDoc      `json:"new"`
		Changes []changeJSON `json:"changes"`
		// Unsafe is true when a change is unsafe for paused or new threads.
		Unsafe bool `json:"unsafe"`
	}
	diffDoc struct {
		File        string `json:"file"`
		Fingerprint string `json:"fingerprint"`
	}
	changeJSON struct {
		Kind         string     `json:"kind"`
		Subject      string     `json:"subject"`
		Old          *placeJSON `json:"old,omitempty"`
		New          *placeJSON `json:"new,omitempty"`
		Detail       string     `json:"detail"`
		UnsafePaused bool       `json:"unsafe_paused"`
		UnsafeNew    bool       `json:"unsafe_new"`
		Reason       string     `json:"reason,omitempty"`
	}
	placeJSON struct {
		Path string `json:"path"`
		Line int    `json:"line"`
		Col  int    `json:"col"`
	}
)

func writeDiffJSON(w io.Writer, old, nw *spec.Graph, changes []spec.Change) {
	out := diffJSON{
		Old:     diffDoc{File: old.Pos("").File, Fingerprint: old.Fingerprint()},
		New:     diffDoc{File: nw.Pos("").File, Fingerprint: nw.Fingerprint()},
		Changes: []changeJSON{},
	}
	place := func(path string, p spec.Pos) *placeJSON {
		if path == "" {
			return nil
		}
		return &placeJSON{Path: path, Line: p.Line, Col: p.Col}
	}
	for _, c := range changes {
		out.Changes = append(out.Changes, changeJSON{
			Kind: string(c.Kind), Subject: c.Subject,
			Old: place(c.OldPath, c.OldPos), New: place(c.NewPath, c.NewPos),
			Detail: c.Detail, UnsafePaused: c.UnsafePaused, UnsafeNew: c.UnsafeNew, Reason: c.Reason,
		})
		out.Unsafe = out.Unsafe || c.Unsafe()
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	w.Write(append(b, '\n'))
}

// loadChildren decodes the child documents of --subgraph NAME=SPEC flags,
// by name, over base (a copy; nil for none).
func loadChildren(flags []string, base map[string]*spec.Graph, stderr io.Writer) (map[string]*spec.Graph, error) {
	parsed, err := parseSubgraphFlags(flags)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]*spec.Graph{}
	}
	for _, f := range parsed {
		g, _, err := loadSpec(f.spec, stderr)
		if err != nil {
			return nil, err
		}
		if g.Name != f.name {
			return nil, &usageError{fmt.Sprintf("--subgraph %s=%s: the document is named %q; name the flag after the document's \"name\"", f.name, f.spec, g.Name)}
		}
		out[f.name] = g
	}
	return out, nil
}

// pinChildren is g with its subgraph nodes pinned to the versions of the
// children of set, as the runtime versions a graph running them.
func pinChildren(g *spec.Graph, set map[string]*spec.Graph) *spec.Graph {
	docs := slices.Collect(maps.Values(set))
	return spec.PinSubgraphs(g, spec.PinnedFingerprints(docs...))
}
