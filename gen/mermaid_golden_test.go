package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/spec"
)

// This file holds the Mermaid goldens: testdata/mermaid/<name>.mmd is the
// diagram of each example spec, each generator golden case and each
// accepted document of the hostile corpus. `go test ./gen -run
// TestMermaidGolden -update` rewrites them (the -update flag is
// golden_test.go's). Every diagram is also parsed back by a strict reader of
// the line grammar Mermaid writes, which checks that no document text broke
// out of its label and that every label says exactly what the document
// holds.

// mermaidSources lists the documents that have a Mermaid golden, by golden
// name, as paths from the module root.
func mermaidSources(t *testing.T) map[string]string {
	t.Helper()
	root := moduleRoot(t)
	out := map[string]string{}
	add := func(name, file string) {
		rel, err := filepath.Rel(root, file)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := out[name]; dup {
			t.Fatalf("%s and %s would share the golden %s.mmd", prev, rel, name)
		}
		out[name] = filepath.ToSlash(rel)
	}
	glob := func(pattern string) []string {
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil || len(files) == 0 {
			t.Fatalf("no file matches %s (%v)", pattern, err)
		}
		return files
	}
	for _, f := range glob("examples/*/*.json") {
		add("example-"+strings.TrimSuffix(filepath.Base(f), ".json"), f)
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

// TestMermaidGolden compares the diagram of every source with its golden,
// and checks each diagram with checkMermaid.
func TestMermaidGolden(t *testing.T) {
	root := moduleRoot(t)
	dir := filepath.Join(root, "testdata", "mermaid")
	sources := mermaidSources(t)
	for _, name := range sortedKeys(sources) {
		src := sources[name]
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(src)))
			if err != nil {
				t.Fatal(err)
			}
			g, diags := spec.Decode(src, data)
			if diags.HasErrors() {
				t.Fatalf("%s does not decode:\n%v", src, diags)
			}
			got := Mermaid(g)
			if again := Mermaid(g); again != got {
				t.Fatalf("Mermaid is not stable:\n%s", cmp.Diff(got, again))
			}
			if err := checkMermaid(g, got); err != nil {
				t.Errorf("diagram of %s: %v\n%s", src, err, got)
			}
			golden := filepath.Join(dir, name+".mmd")
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v; run go test ./gen -run TestMermaidGolden -update", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Mermaid(%s) differs from testdata/mermaid/%s.mmd (-want +got):\n%s\nIf the change is intended, run go test ./gen -run TestMermaidGolden -update", src, name, diff)
			}
		})
	}
	// No golden outlives its document.
	files, _ := filepath.Glob(filepath.Join(dir, "*.mmd"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".mmd")
		if _, ok := sources[name]; !ok {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("testdata/mermaid/%s.mmd has no document; delete it, or run with -update", name)
		}
	}
}

// TestMermaidHostileStrings draws graphs built in Go whose every name and
// literal is hostile, and checks each diagram with checkMermaid.
func TestMermaidHostileStrings(t *testing.T) {
	hostile := []string{
		`a"]`, `a"] --> evil`, "a\nb", "a\r\nb", "a\u2028b", "a\u0085b", `x|y`, "`md`", "%%", "%%{init: {'theme': 'dark'}}%%",
		"<script>alert(1)</script>", "&lt;", "#quot;", "#35;", "ﬂ°quot¶ß", "style x:#f00;", "classDef c fill:#f00;",
		"end", "__end__", "", " ", "\t", "\x00", "\u202eevil", "\u200b", "\ufeff", "é", "e\u0301", "🙂", "\U000e0001",
		`\"`, `\\`, "[(x)]", "{{x}}", "a;b", "-->", "o--o", "click n0 call alert()", "\xff",
	}
	for i, s := range hostile {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			g := &spec.Graph{
				Channels: []spec.Channel{{Name: s}},
				Nodes:    []spec.Node{{ID: s, Type: s}, {ID: "b" + s, Type: "t"}},
				Edges: []spec.Edge{
					{From: spec.Start, To: s},
					{From: s, To: "b" + s, When: &spec.Predicate{Channel: s, Op: spec.OpEq, Value: spec.Literal{Kind: spec.LitString, Str: s}}},
					{From: s, To: "b" + s, When: &spec.Predicate{Channel: s, Op: spec.OpIn, Values: []spec.Literal{{Kind: spec.LitString, Str: s}, {Kind: spec.LitNumber, Num: "1e400"}, {Kind: spec.LitNull}, {Kind: spec.LitBool, Bool: true}}}},
					{From: "b" + s, To: spec.End, When: &spec.Predicate{Channel: s, Op: spec.OpTruthy, Value: spec.Literal{Kind: spec.LitBool}}},
					{From: "b" + s, To: "ghost" + s},
				},
			}
			out := Mermaid(g)
			if err := checkMermaid(g, out); err != nil {
				t.Errorf("%q: %v\n%s", s, err, out)
			}
		})
	}
}

// TestMermaidLabels pins the label of every operator and the rule for names.
func TestMermaidLabels(t *testing.T) {
	str := func(s string) spec.Literal { return spec.Literal{Kind: spec.LitString, Str: s} }
	num := func(n string) spec.Literal { return spec.Literal{Kind: spec.LitNumber, Num: n} }
	tests := []struct {
		p    spec.Predicate
		want string
	}{
		{spec.Predicate{Channel: "intent", Op: spec.OpEq, Value: str("buy")}, `intent = "buy"`},
		{spec.Predicate{Channel: "x", Op: spec.OpNeq, Value: num("5")}, `x != 5`},
		{spec.Predicate{Channel: "n", Op: spec.OpLt, Value: num("3")}, `n < 3`},
		{spec.Predicate{Channel: "n", Op: spec.OpGt, Value: num("1e2")}, `n > 1e2`},
		{spec.Predicate{Channel: "x", Op: spec.OpIn, Values: []spec.Literal{str("a"), str("b")}}, `x in ["a", "b"]`},
		{spec.Predicate{Channel: "x", Op: spec.OpIn, Values: []spec.Literal{}}, `x in []`},
		{spec.Predicate{Channel: "items", Op: spec.OpTruthy, Value: spec.Literal{Kind: spec.LitBool, Bool: true}}, `items is truthy`},
		{spec.Predicate{Channel: "items", Op: spec.OpTruthy, Value: spec.Literal{Kind: spec.LitBool}}, `items is falsy`},
		{spec.Predicate{Channel: "cart", Op: spec.OpEq, Value: spec.Literal{Kind: spec.LitNull}}, `cart = null`},
		{spec.Predicate{Channel: "ok", Op: spec.OpNeq, Value: spec.Literal{Kind: spec.LitBool, Bool: true}}, `ok != true`},
		{spec.Predicate{Channel: "my intent", Op: spec.OpEq, Value: str("a\nb")}, `"my intent" = "a\nb"`},
		{spec.Predicate{Channel: "", Op: spec.OpEq, Value: str(`"`)}, `"" = "\""`},
		{spec.Predicate{Channel: "c", Op: spec.OpEq, Value: str("\u202e\u00a0\x01é")}, `c = "\u202e\u00a0\u0001é"`},
		{spec.Predicate{Channel: "c", Op: "near", Value: num("1")}, `c "near" 1`},
	}
	for _, tt := range tests {
		if got := edgeLabel(&tt.p); got != tt.want {
			t.Errorf("edgeLabel(%+v) = %s, want %s", tt.p, got, tt.want)
		}
	}
	for name, want := range map[string]string{
		"agent": "agent", "http_call": "http_call", "a-b.c/d:e": "a-b.c/d:e", "ünïcödé": "ünïcödé", "🙂": "🙂",
		"": `""`, "a b": `"a b"`, " a": `" a"`, `a"b`: `"a\"b"`, `a\b`: `"a\\b"`, "a\tb": `"a\tb"`,
		"a\u200bb": `"a\u200bb"`, "a\u00a0b": `"a\u00a0b"`, "\U000e0001": `"\udb40\udc01"`,
	} {
		if got := mermaidName(name); got != want {
			t.Errorf("mermaidName(%q) = %s, want %s", name, got, want)
		}
	}
}

var (
	mmdTerminal = regexp.MustCompile(`^    (start|end_)\(\["(__start__|__end__)"\]\)$`)
	mmdNode     = regexp.MustCompile(`^    ([nu][0-9]+)\["([^"]*)"\]$`)
	mmdEdge     = regexp.MustCompile(`^    (start|end_|[nu][0-9]+) -->(?:\|"([^"|]*)"\|)? (start|end_|[nu][0-9]+)$`)
	mmdEntity   = regexp.MustCompile(`^#([a-z]+|[0-9]+);`)
)

// mmdDecode turns a label's Mermaid entity codes back into characters,
// refusing any raw character that Mermaid or HTML could read as markup.
func mmdDecode(label string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(label); {
		if m := mmdEntity.FindStringSubmatch(label[i:]); m != nil {
			switch m[1] {
			case "quot":
				b.WriteByte('"')
			case "lt":
				b.WriteByte('<')
			case "gt":
				b.WriteByte('>')
			case "amp":
				b.WriteByte('&')
			default:
				n, err := strconv.Atoi(m[1])
				if err != nil {
					return "", fmt.Errorf("label %q: unknown entity %s", label, m[0])
				}
				b.WriteRune(rune(n))
			}
			i += len(m[0])
			continue
		}
		r, size := utf8.DecodeRuneInString(label[i:])
		if strings.ContainsRune("\"#%:|`<>&ﬂ¶", r) {
			return "", fmt.Errorf("label %q holds a raw %q", label, r)
		}
		if r != ' ' && (!unicode.IsPrint(r) || unicode.Is(unicode.Cf, r)) {
			return "", fmt.Errorf("label %q holds the raw character %U", label, r)
		}
		b.WriteRune(r)
		i += size
	}
	return b.String(), nil
}

// checkName checks that text shows name exactly: name itself when it is
// plain, else a JSON string of it.
func checkName(text, name string) error {
	if strings.HasPrefix(text, `"`) {
		var s string
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return fmt.Errorf("%s is not a JSON string: %v", text, err)
		}
		if s != strings.ToValidUTF8(name, "\uFFFD") {
			return fmt.Errorf("%s reads %q, want %q", text, s, name)
		}
		if plainName(name) {
			return fmt.Errorf("plain name %q is quoted", name)
		}
		return nil
	}
	if text != name || !plainName(name) {
		return fmt.Errorf("%q shows %q, which is not plain", text, name)
	}
	return nil
}

// checkMermaid reads a diagram line by line with a strict grammar and
// checks that it draws g exactly: every node in order with its id and type,
// the terminals, and every edge in order with its exact predicate.
func checkMermaid(g *spec.Graph, out string) error {
	if !strings.HasSuffix(out, "\n") {
		return fmt.Errorf("no final newline")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "flowchart TD" {
		return fmt.Errorf("first line %q", lines[0])
	}
	ids := map[string]string{"start": spec.Start, "end_": spec.End} // Mermaid id → spec name
	var nodes, nodeTypes, undeclared []string
	var edges [][3]string
	for _, line := range lines[1:] {
		switch {
		case mmdTerminal.MatchString(line):
			m := mmdTerminal.FindStringSubmatch(line)
			if (m[1] == "start") != (m[2] == spec.Start) {
				return fmt.Errorf("terminal %q", line)
			}
		case mmdNode.MatchString(line):
			m := mmdNode.FindStringSubmatch(line)
			idText, typeText, ok := strings.Cut(m[2], "<br/><i>")
			typeText, ok2 := strings.CutSuffix(typeText, "</i>")
			if !ok || !ok2 {
				return fmt.Errorf("node label %q is not ID<br/><i>TYPE</i>", m[2])
			}
			id, err := mmdDecode(idText)
			if err != nil {
				return err
			}
			typ, err := mmdDecode(typeText)
			if err != nil {
				return err
			}
			if m[1][0] == 'u' {
				if typ != "(undeclared node)" {
					return fmt.Errorf("undeclared node %s has type %q", m[1], typ)
				}
				undeclared = append(undeclared, id)
			} else {
				nodes = append(nodes, id)
				nodeTypes = append(nodeTypes, typ)
			}
			if m[1] != fmt.Sprintf("n%d", len(nodes)-1) && m[1] != fmt.Sprintf("u%d", len(undeclared)-1) {
				return fmt.Errorf("node %s out of order", m[1])
			}
			ids[m[1]] = id
		case mmdEdge.MatchString(line):
			m := mmdEdge.FindStringSubmatch(line)
			edges = append(edges, [3]string{m[1], m[2], m[3]})
		default:
			return fmt.Errorf("line %q is not a terminal, node or edge of the expected grammar", line)
		}
	}
	if len(nodes) != len(g.Nodes) {
		return fmt.Errorf("%d nodes drawn, want %d", len(nodes), len(g.Nodes))
	}
	for i, n := range g.Nodes {
		if err := checkName(nodes[i], n.ID); err != nil {
			return fmt.Errorf("node n%d id: %v", i, err)
		}
		if err := checkName(nodeTypes[i], n.Type); err != nil {
			return fmt.Errorf("node n%d type: %v", i, err)
		}
	}
	if len(edges) != len(g.Edges) {
		return fmt.Errorf("%d edges drawn, want %d", len(edges), len(g.Edges))
	}
	first := map[string]int{}
	for i, n := range g.Nodes {
		if _, ok := first[n.ID]; !ok {
			first[n.ID] = i
		}
	}
	endpoint := func(mid, name string) error {
		switch {
		case name == spec.Start || name == spec.End:
			if ids[mid] != name {
				return fmt.Errorf("%s drawn as %s", name, mid)
			}
		case mid[0] == 'n':
			if i, ok := first[name]; !ok || mid != fmt.Sprintf("n%d", i) {
				return fmt.Errorf("%q drawn as %s", name, mid)
			}
		default:
			if _, declared := first[name]; declared {
				return fmt.Errorf("declared node %q drawn as undeclared %s", name, mid)
			}
			i, _ := strconv.Atoi(mid[1:])
			if err := checkName(undeclared[i], name); err != nil {
				return err
			}
		}
		return nil
	}
	for i, e := range g.Edges {
		d := edges[i]
		if err := endpoint(d[0], e.From); err != nil {
			return fmt.Errorf("edges[%d] from: %v", i, err)
		}
		if err := endpoint(d[2], e.To); err != nil {
			return fmt.Errorf("edges[%d] to: %v", i, err)
		}
		if (e.When == nil) != (d[1] == "") {
			return fmt.Errorf("edges[%d]: guard %v drawn as label %q", i, e.When, d[1])
		}
		if e.When == nil {
			continue
		}
		label, err := mmdDecode(d[1])
		if err != nil {
			return fmt.Errorf("edges[%d]: %v", i, err)
		}
		if err := checkPredicate(label, e.When); err != nil {
			return fmt.Errorf("edges[%d]: label %q: %v", i, label, err)
		}
	}
	return nil
}

// checkPredicate checks that a decoded edge label states p exactly.
func checkPredicate(label string, p *spec.Predicate) error {
	var chText, rest string
	if strings.HasPrefix(label, `"`) {
		dec := json.NewDecoder(strings.NewReader(label))
		var s string
		if err := dec.Decode(&s); err != nil {
			return err
		}
		chText, rest = label[:dec.InputOffset()], label[dec.InputOffset():]
	} else {
		var ok bool
		chText, rest, ok = strings.Cut(label, " ")
		if !ok {
			return fmt.Errorf("no operator")
		}
		rest = " " + rest
	}
	if err := checkName(chText, p.Channel); err != nil {
		return fmt.Errorf("channel: %v", err)
	}
	lit := func(text string, l spec.Literal) error {
		text = strings.TrimSpace(text)
		switch l.Kind {
		case spec.LitString:
			var s string
			if err := json.Unmarshal([]byte(text), &s); err != nil || s != strings.ToValidUTF8(l.Str, "\uFFFD") {
				return fmt.Errorf("literal %s does not read %q (%v)", text, l.Str, err)
			}
		case spec.LitNumber:
			if text != l.Num {
				return fmt.Errorf("number %s, want the document's text %s", text, l.Num)
			}
		case spec.LitBool:
			if text != strconv.FormatBool(l.Bool) {
				return fmt.Errorf("boolean %s, want %t", text, l.Bool)
			}
		default:
			if text != "null" {
				return fmt.Errorf("%s, want null", text)
			}
		}
		return nil
	}
	ops := map[spec.Op]string{spec.OpEq: " = ", spec.OpNeq: " != ", spec.OpGt: " > ", spec.OpLt: " < "}
	switch p.Op {
	case spec.OpTruthy:
		want := " is falsy"
		if p.Value.Bool {
			want = " is truthy"
		}
		if rest != want {
			return fmt.Errorf("%q, want %q", rest, want)
		}
	case spec.OpIn:
		arr, ok := strings.CutPrefix(rest, " in ")
		if !ok {
			return fmt.Errorf("no \" in \"")
		}
		var elems []json.RawMessage
		dec := json.NewDecoder(strings.NewReader(arr))
		dec.UseNumber()
		if err := dec.Decode(&elems); err != nil || dec.InputOffset() != int64(len(arr)) {
			return fmt.Errorf("%s is not one JSON array (%v)", arr, err)
		}
		if len(elems) != len(p.Values) {
			return fmt.Errorf("%d elements, want %d", len(elems), len(p.Values))
		}
		for i, e := range elems {
			if err := lit(string(e), p.Values[i]); err != nil {
				return err
			}
		}
	default:
		op, ok := ops[p.Op]
		if !ok {
			return nil // an invalid operator of a graph built in Go: drawn, not checked
		}
		text, ok := strings.CutPrefix(rest, op)
		if !ok {
			return fmt.Errorf("%q does not start with %q", rest, op)
		}
		if !json.Valid([]byte(text)) {
			return fmt.Errorf("%s is not one JSON literal", text)
		}
		return lit(text, p.Value)
	}
	return nil
}

// TestMermaidGoldenNames keeps the golden file names readable: each names
// its document's directory or file.
func TestMermaidGoldenNames(t *testing.T) {
	names := sortedKeys(mermaidSources(t))
	for _, want := range []string{"example-support", "golden-bound", "golden-hostile", "golden-operators", "golden-support", "hostile-newline-in-id"} {
		if !slices.Contains(names, want) {
			t.Errorf("no Mermaid golden %s among %v", want, names)
		}
	}
	if !bytes.Equal([]byte(Mermaid(&spec.Graph{})), []byte("flowchart TD\n")) {
		t.Errorf("the empty graph draws %q", Mermaid(&spec.Graph{}))
	}
}

// TestReadmeMermaid keeps the diagram in README.md what the tool draws for
// examples/support/support.json. It skips while the README has no
// ```mermaid block.
func TestReadmeMermaid(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Skipf("no README.md: %v", err)
	}
	_, block, ok := strings.Cut(string(readme), "```mermaid\n")
	if !ok {
		t.Skip("README.md has no ```mermaid block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md: the ```mermaid block is not closed")
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "support", "support.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, diags := spec.Decode("support.json", data)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if want := Mermaid(g); block != want {
		t.Errorf("the README's diagram is not what go run ./cmd/ilmekgen mermaid examples/support/support.json prints (-want +got):\n%s", cmp.Diff(want, block))
	}
}

// FuzzMermaid checks that the diagram of every document the decoder
// accepts passes checkMermaid: no text escapes its label, and every label
// says exactly what the document holds.
func FuzzMermaid(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "hostile", "*.json"))
	golden, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "*", "spec.json"))
	for _, file := range append(files, golden...) {
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
		if err := checkMermaid(g, Mermaid(g)); err != nil {
			t.Fatal(err)
		}
	})
}
