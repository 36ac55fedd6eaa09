package gen

import (
	"fmt"
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
// generating a 10,000-node chain may allocate at most 150 bytes per
// document byte in all (about 100 today; 350 when every file's jennifer
// tree and go/format's syntax tree were held at once), and no file may
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
	if perByte > 150 {
		t.Errorf("generating allocated %.0f bytes per document byte, want at most 150", perByte)
	}
	if livePerByte > 20 {
		t.Errorf("the live heap while emitting reached %.1f bytes per document byte, want at most 20", livePerByte)
	}
}
