package mermaid_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

var update = flag.Bool("update", false, "rewrite testdata/mermaid/*.mmd")

// This file holds the Mermaid goldens: ../testdata/mermaid/<name>.mmd is
// the diagram of each example document, each generator golden case and
// each accepted document of the hostile corpus. `go test ./mermaid -run
// TestGolden -update` rewrites them. Every diagram is also read back by a
// strict reader of the format (checkDiagram), which checks that no
// document text broke out of its label and that every label says what the
// document holds.

// sources lists the documents that have a golden, by golden name, as paths
// from the module root.
func sources(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(name, file string) {
		rel := filepath.ToSlash(strings.TrimPrefix(file, "../"))
		if prev, dup := out[name]; dup {
			t.Fatalf("%s and %s would share the golden %s.mmd", prev, rel, name)
		}
		out[name] = rel
	}
	glob := func(pattern string) []string {
		files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(pattern)))
		if err != nil || len(files) == 0 {
			t.Fatalf("no file matches %s (%v)", pattern, err)
		}
		return files
	}
	// An example document is named by its file; one whose name another
	// example's document already has (examples/refund/support.json beside
	// examples/support/support.json) is named by its directory too. A
	// document named like its directory keeps the short name.
	examples := glob("examples/*/*.json")
	own := func(f string) bool {
		return strings.TrimSuffix(filepath.Base(f), ".json") == filepath.Base(filepath.Dir(f))
	}
	slices.SortStableFunc(examples, func(a, b string) int {
		switch {
		case own(a) && !own(b):
			return -1
		case own(b) && !own(a):
			return 1
		}
		return 0
	})
	for _, f := range examples {
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		name := "example-" + base
		if _, taken := out[name]; taken {
			name = "example-" + filepath.Base(filepath.Dir(f)) + "-" + base
		}
		add(name, f)
	}
	for _, f := range glob("testdata/golden/*/spec.json") {
		add("golden-"+filepath.Base(filepath.Dir(f)), f)
	}
	for _, f := range glob("testdata/hostile/*.json") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, diags := spec.Decode(f, data); diags.HasErrors() {
			continue // refused documents have no diagram
		}
		add("hostile-"+strings.TrimSuffix(filepath.Base(f), ".json"), f)
	}
	return out
}

func draw(t testing.TB, g *spec.Graph) string {
	t.Helper()
	out, err := mermaid.Spec(g, mermaid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGolden compares the diagram of every source with its golden and
// reads each back with checkDiagram.
func TestGolden(t *testing.T) {
	dir := filepath.Join("..", "testdata", "mermaid")
	srcs := sources(t)
	names := make([]string, 0, len(srcs))
	for n := range srcs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, want := range []string{"example-support", "golden-bound", "golden-hostile", "golden-operators", "golden-support", "hostile-newline-in-id"} {
		if !slices.Contains(names, want) {
			t.Errorf("no Mermaid golden %s among %v", want, names)
		}
	}
	for _, name := range names {
		src := srcs[name]
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(src)))
			if err != nil {
				t.Fatal(err)
			}
			g, diags := spec.Decode(src, data)
			if diags.HasErrors() {
				t.Fatalf("%s does not decode:\n%v", src, diags)
			}
			got := draw(t, g)
			if again := draw(t, g); again != got {
				t.Fatalf("not stable:\n%s", cmp.Diff(got, again))
			}
			if err := checkDiagram(g, got); err != nil {
				t.Errorf("diagram of %s: %v\n%s", src, err, got)
			}
			golden := filepath.Join(dir, name+".mmd")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v; run go test ./mermaid -run TestGolden -update", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("diagram of %s differs from testdata/mermaid/%s.mmd (-want +got):\n%s\nIf the change is intended, run go test ./mermaid -run TestGolden -update", src, name, diff)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.mmd"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".mmd")
		if _, ok := srcs[name]; !ok {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("testdata/mermaid/%s.mmd has no document; delete it, or run with -update", name)
		}
	}
}

var (
	idRE      = `[A-Za-z_][A-Za-z0-9_]*`
	nodeLine  = regexp.MustCompile(`^  (` + idRE + `)\["([^"]*)"\]$`)
	edgeLine  = regexp.MustCompile(`^  (` + idRE + `) --> (` + idRE + `)$`)
	guardLine = regexp.MustCompile(`^  (` + idRE + `) -->\|"([^"]*)"\| (` + idRE + `)$`)
	gotoLine  = regexp.MustCompile(`^  (` + idRE + `) -\.-> (` + idRE + `)$`)
	unescape  = strings.NewReplacer("#35;", "#", "#quot;", `"`, "#lt;", "<", "#gt;", ">", "#96;", "`")
	breaks    = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")
)

// labelSays decodes a label and compares it with want (whose line breaks
// the format turns into spaces); a raw character the format escapes is an
// error.
func labelSays(label, want string) error {
	if strings.ContainsAny(label, "<>`\"\n\r") {
		return fmt.Errorf("label %q holds a raw character the format escapes", label)
	}
	for i := strings.IndexByte(label, '#'); i >= 0; i = strings.IndexByte(label[i+1:], '#') + i + 1 {
		rest := label[i:]
		if !strings.HasPrefix(rest, "#35;") && !strings.HasPrefix(rest, "#quot;") && !strings.HasPrefix(rest, "#lt;") && !strings.HasPrefix(rest, "#gt;") && !strings.HasPrefix(rest, "#96;") {
			return fmt.Errorf("label %q holds a raw #", label)
		}
		if strings.IndexByte(label[i+1:], '#') < 0 {
			break
		}
	}
	if got := unescape.Replace(label); got != breaks.Replace(want) {
		return fmt.Errorf("label says %q, want %q", got, breaks.Replace(want))
	}
	return nil
}

// checkDiagram reads out line by line with the strict grammar of the
// format and checks that it draws g exactly: START, every node in order
// with a unique id and its exact name, END when an edge or a goto list
// reaches it, every edge in order between the right ids with its exact
// predicate, then every node's declared goto targets, dashed.
func checkDiagram(g *spec.Graph, out string) error {
	if !strings.HasSuffix(out, "\n") {
		return fmt.Errorf("the diagram does not end with a line break")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	next := func() (string, error) {
		if len(lines) == 0 {
			return "", fmt.Errorf("the diagram ends early")
		}
		l := lines[0]
		lines = lines[1:]
		return l, nil
	}
	if l, _ := next(); l != "flowchart TD" {
		return fmt.Errorf("first line %q", l)
	}
	if l, err := next(); err != nil || l != "  __start__([START])" {
		return fmt.Errorf("second line %q, want START", l)
	}
	var order []string
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if !seen[n.ID] {
			seen[n.ID] = true
			order = append(order, n.ID)
		}
	}
	for _, e := range g.Edges {
		for _, name := range []string{e.From, e.To} {
			if name != spec.Start && name != spec.End && !seen[name] {
				seen[name] = true
				order = append(order, name)
			}
		}
	}
	for _, n := range g.Nodes {
		for _, name := range n.Goto {
			if name != spec.Start && name != spec.End && !seen[name] {
				seen[name] = true
				order = append(order, name)
			}
		}
	}
	ids := map[string]string{spec.Start: spec.Start, spec.End: spec.End}
	taken := map[string]bool{spec.Start: true, spec.End: true}
	for _, name := range order {
		l, err := next()
		if err != nil {
			return err
		}
		m := nodeLine.FindStringSubmatch(l)
		if m == nil {
			return fmt.Errorf("node %q: line %q is not a node", name, l)
		}
		if taken[m[1]] {
			return fmt.Errorf("node %q: id %s is taken", name, m[1])
		}
		taken[m[1]] = true
		ids[name] = m[1]
		if err := labelSays(m[2], name); err != nil {
			return fmt.Errorf("node %q: %w", name, err)
		}
	}
	if slices.ContainsFunc(g.Edges, func(e spec.Edge) bool { return e.To == spec.End }) ||
		slices.ContainsFunc(g.Nodes, func(n spec.Node) bool { return slices.Contains(n.Goto, spec.End) }) {
		if l, err := next(); err != nil || l != "  __end__([END])" {
			return fmt.Errorf("line %q, want END", l)
		}
	}
	for i, e := range g.Edges {
		l, err := next()
		if err != nil {
			return err
		}
		if e.When == nil {
			m := edgeLine.FindStringSubmatch(l)
			if m == nil || m[1] != ids[e.From] || m[2] != ids[e.To] {
				return fmt.Errorf("edges[%d]: line %q, want %s --> %s", i, l, ids[e.From], ids[e.To])
			}
			continue
		}
		m := guardLine.FindStringSubmatch(l)
		if m == nil || m[1] != ids[e.From] || m[3] != ids[e.To] {
			return fmt.Errorf("edges[%d]: line %q, want a labelled %s --> %s", i, l, ids[e.From], ids[e.To])
		}
		if err := labelSays(m[2], mermaid.PredicateText(e.When)); err != nil {
			return fmt.Errorf("edges[%d]: %w", i, err)
		}
		if !strings.Contains(unescape.Replace(m[2]), breaks.Replace(e.When.Channel)) {
			return fmt.Errorf("edges[%d]: label %q does not name its channel", i, m[2])
		}
	}
	// A node's declared goto targets, dashed, after the edges.
	for i, n := range g.Nodes {
		for k, t := range n.Goto {
			l, err := next()
			if err != nil {
				return err
			}
			m := gotoLine.FindStringSubmatch(l)
			if m == nil || m[1] != ids[n.ID] || m[2] != ids[t] {
				return fmt.Errorf("nodes[%d].goto[%d]: line %q, want %s -.-> %s", i, k, l, ids[n.ID], ids[t])
			}
		}
	}
	if len(lines) > 0 {
		return fmt.Errorf("unexpected lines after the edges: %q", lines)
	}
	return nil
}

// TestReadmeMermaid keeps the diagram in README.md what the tool draws for
// examples/support/support.json.
func TestReadmeMermaid(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```mermaid\n")
	if !ok {
		t.Fatal("README.md has no ```mermaid block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md: the ```mermaid block is not closed")
	}
	data, err := os.ReadFile(filepath.Join("..", "examples", "support", "support.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, diags := spec.Decode("support.json", data)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if want := draw(t, g); block != want {
		t.Errorf("the README's diagram is not what go run ./cmd/ilmekgen mermaid examples/support/support.json prints (-want +got):\n%s", cmp.Diff(want, block))
	}
}

// FuzzMermaid checks that the diagram of every document the decoder
// accepts passes checkDiagram: no text escapes its label, and every label
// says what the document holds.
func FuzzMermaid(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "hostile", "*.json"))
	golden, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "*", "spec.json"))
	viz, _ := filepath.Glob(filepath.Join("..", "conformance", "testdata", "viz", "*.json"))
	for _, file := range append(append(files, golden...), viz...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, diags := spec.Decode("fuzz.json", data)
		if diags.HasErrors() {
			return
		}
		if err := checkDiagram(g, draw(t, g)); err != nil {
			t.Fatal(err)
		}
	})
}
