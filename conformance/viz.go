package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// VizCase is a diagram case of MODEL.md §9.1 (the reference's
// conformance/viz format): a document, optional code routers and guards,
// render options, and the exact Mermaid text every port draws for it.
type VizCase struct {
	File    string
	Spec    json.RawMessage `json:"spec"`
	Routers []struct {
		From    string   `json:"from"`
		Targets []string `json:"targets"` // null: the router declared none
	} `json:"routers"`
	Guards []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"guards"`
	Options struct {
		Direction      string `json:"direction"`
		IncludeRouters *bool  `json:"includeRouters"`
		Highlight      *struct {
			Next    []string `json:"next"`
			Pending []string `json:"pending"`
		} `json:"highlight"`
	} `json:"options"`
	// Want is the .mmd sibling's text, CRLF normalized.
	Want string `json:"-"`
}

// IsVizCase reports whether path (a .json file) is a viz case: it has a
// .mmd sibling.
func IsVizCase(path string) bool {
	_, err := os.Stat(strings.TrimSuffix(path, ".json") + ".mmd")
	return err == nil
}

// LoadVizDir reads the viz cases of dir (every .json file with a .mmd
// sibling), sorted by name.
func LoadVizDir(dir string) ([]*VizCase, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []*VizCase
	for _, p := range paths {
		if !IsVizCase(p) {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		c := &VizCase{File: p}
		if err := json.Unmarshal(data, c); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(p, ".json") + ".mmd")
		if err != nil {
			return nil, err
		}
		c.Want = strings.ReplaceAll(string(want), "\r\n", "\n")
		out = append(out, c)
	}
	return out, nil
}

// VizKinds are the program kinds that draw viz cases: "spec" (the
// document itself, and the graph runtime.FromSpec builds from it) and
// "code" (the graph built with runtime.NewBuilder, the only kind that can
// hold routers and Go guards). A generated graph draws its embedded
// document, as the spec kind does.
var VizKinds = []string{"spec", "code"}

func (c *VizCase) options() mermaid.Options {
	o := mermaid.Options{Direction: c.Options.Direction, HideRouters: c.Options.IncludeRouters != nil && !*c.Options.IncludeRouters}
	if h := c.Options.Highlight; h != nil {
		o.Highlight = &mermaid.Highlight{Next: h.Next, Pending: h.Pending}
	}
	return o
}

// noopRegistry maps every node type of doc to a node that does nothing.
func noopRegistry(doc *spec.Graph) runtime.Registry {
	reg := runtime.Registry{}
	for _, n := range doc.Nodes {
		reg[n.Type] = func(spec.Node) (runtime.NodeFunc, error) { return noop, nil }
	}
	return reg
}

// Render draws the case through kind; applicable is false when the kind
// cannot express the case (a document holds no router or Go guard).
func (c *VizCase) Render(kind string) (out []string, applicable bool, err error) {
	doc, diags := spec.Decode(c.File+"#spec", c.Spec)
	if err := diags.Err(); err != nil {
		return nil, true, err
	}
	o := c.options()
	switch kind {
	case "spec":
		if len(c.Routers) > 0 || len(c.Guards) > 0 {
			return nil, false, nil
		}
		fromDoc, err := mermaid.Spec(doc, o)
		if err != nil {
			return nil, true, err
		}
		g, err := runtime.FromSpec(doc, noopRegistry(doc))
		if err != nil {
			return nil, true, err
		}
		built, err := runtime.Mermaid(g, o)
		return []string{fromDoc, built}, true, err
	case "code":
		b, err := CodeBuilder(doc, noopRegistry(doc))
		if err != nil {
			return nil, true, err
		}
		for _, r := range c.Routers {
			route := func(runtime.Values) ([]runtime.Goto, error) { return nil, nil }
			if r.Targets == nil {
				b.Router(r.From, route)
			} else {
				b.RouterTo(r.From, r.Targets, route)
			}
		}
		for _, gd := range c.Guards {
			b.EdgeIf(gd.From, gd.To, func(runtime.Values) bool { return false })
		}
		g, err := b.Compile()
		if err != nil {
			return nil, true, err
		}
		out, err := runtime.Mermaid(g, o)
		return []string{out}, true, err
	}
	return nil, false, fmt.Errorf("unknown viz kind %q (known: %s)", kind, strings.Join(VizKinds, ", "))
}

// RunViz draws every case through every kind of kinds that knows viz cases
// and can express the case, compares byte for byte with the case's .mmd,
// and prints one line per case and kind, as RunSuite does.
func RunViz(w io.Writer, cases []*VizCase, kinds []string) Report {
	var rep Report
	for _, k := range kinds {
		if !slices.Contains(VizKinds, k) {
			continue
		}
		for _, c := range cases {
			outs, ok, err := c.Render(k)
			if !ok {
				continue
			}
			label := "viz/" + k
			var diffs []string
			if err != nil {
				diffs = append(diffs, "error: "+err.Error())
			}
			for _, got := range outs {
				if got != c.Want {
					diffs = append(diffs, fmt.Sprintf("got:\n%s\nwant:\n%s", got, c.Want))
				}
			}
			if len(diffs) == 0 {
				rep.Passed++
				fmt.Fprintf(w, "ok   %-18s %s\n", label, c.File)
				continue
			}
			rep.Failed++
			fmt.Fprintf(w, "FAIL %-18s %s\n", label, c.File)
			for _, d := range diffs {
				fmt.Fprintf(w, "     %s\n", strings.ReplaceAll(d, "\n", "\n     "))
			}
		}
	}
	return rep
}
