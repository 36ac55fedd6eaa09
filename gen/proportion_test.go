package gen

import (
	"fmt"
	"go/parser"
	"go/token"
	"runtime"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// chainDoc is a chain of n nodes of one type, compact: the shape of the
// largest documents the limits allow (100,000 nodes, about 6 MB).
func chainDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"chain","channels":{"items":{"reducer":"append"}},"nodes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"n%d","type":"step"}`, i)
	}
	b.WriteString(`],"edges":[{"from":"__start__","to":"n0"}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `,{"from":"n%d","to":"n%d"}`, i-1, i)
	}
	fmt.Fprintf(&b, `,{"from":"n%d","to":"__end__"}]}`, n-1)
	return []byte(b.String())
}

// TestGenerateProportion guards the generator's proportion to its input:
// generating a 10,000-node chain may allocate at most 90 bytes per
// document byte in all (about 70 today; 128 when the embedded document
// went through jennifer and its layout built a tree of the document and
// wrote every nested list out whole;
// 350 when every file's jennifer tree and go/format's syntax tree were
// held at once), and no file may
// stay alive after it is emitted — the largest live heap while emitting is
// bounded by 20 bytes per document byte.
func TestGenerateProportion(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 10,000-node package")
	}
	data := chainDoc(10000)
	g, diags := spec.Decode("chain.json", data)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	opts := Options{Package: "chain", Source: "chain.json"}
	var before, after runtime.MemStats
	var maxLive uint64
	runtime.GC()
	runtime.ReadMemStats(&before)
	files := 0
	diags, err := GenerateEach(g, opts, func(f File) error {
		files++
		if len(f.Data) == 0 {
			return fmt.Errorf("%s is empty", f.Name)
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if live := ms.HeapAlloc - min(ms.HeapAlloc, before.HeapAlloc); live > maxLive {
			maxLive = live
		}
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil || diags.HasErrors() || files != len(FileNames) {
		t.Fatalf("GenerateEach: %d files, %v, %v", files, err, diags.Err())
	}
	perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(data))
	livePerByte := float64(maxLive) / float64(len(data))
	t.Logf("%d-byte document: %.0f bytes allocated and %.1f live (while emitting) per document byte", len(data), perByte, livePerByte)
	if bound := float64(90 + raceAllocs); perByte > bound {
		t.Errorf("generating allocated %.0f bytes per document byte, want at most %.0f", perByte, bound)
	}
	if livePerByte > 20 {
		t.Errorf("the live heap while emitting reached %.1f bytes per document byte, want at most 20", livePerByte)
	}
}

// TestTablePlaceholdersNotForged generates documents whose ids, types and
// names spell the tables' placeholders: each file must still parse, hold
// every node once in its node constants, and keep no placeholder.
func TestTablePlaceholdersNotForged(t *testing.T) {
	for _, id := range []string{"ilmekTable0", "ilmekTable1,", "//ilmek:table 0", "ilmekTable0 = 0", "const specJSON = ilmekTable4"} {
		doc := fmt.Sprintf(`{"name":%q,"channels":{"items":{"reducer":"append"}},"nodes":[{"id":%q,"type":"ilmekTable0"},{"id":"b","type":"ilmekTable0"}],"edges":[{"from":"__start__","to":%q},{"from":%q,"to":"b"},{"from":"b","to":"__end__"}]}`, id, id, id, id)
		g, diags := spec.Decode("doc.json", []byte(doc))
		if diags.HasErrors() {
			t.Fatalf("%q: %v", id, diags.Err())
		}
		files, diags := Generate(g, Options{Package: "p", Source: "doc.json"})
		if diags.HasErrors() {
			t.Fatalf("%q: %v", id, diags.Err())
		}
		for _, f := range files {
			if _, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Data, parser.SkipObjectResolution); err != nil {
				t.Errorf("%q: %s does not parse: %v", id, f.Name, err)
			}
			for _, line := range strings.Split(string(f.Data), "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "//ilmek:table") || strings.HasPrefix(l, "ilmekTable") || strings.HasSuffix(l, "= ilmekTable4") {
					t.Errorf("%q: %s keeps a placeholder line %q", id, f.Name, line)
				}
			}
			if f.Name == "graph.gen.go" {
				if n := strings.Count(string(f.Data), " is the id of node "); n != 2 {
					t.Errorf("%q: the node constants name %d nodes, want 2", id, n)
				}
			}
		}
	}
}
