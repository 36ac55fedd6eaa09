package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// TestBindingImportCycle: a binding into a package that imports the
// package being generated, directly or through others, would make the
// generated package import itself; LoadBindings refuses it and spells
// the cycle, while a package outside the cycle binds cleanly.
func TestBindingImportCycle(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":               "module example.com/m\n\ngo 1.26\n",
		"out/out.go":           "package out\n\nconst Version = 1\n",
		"direct/direct.go":     "package direct\n\nimport \"example.com/m/out\"\n\ntype T struct{ V [out.Version]int }\n",
		"mid/mid.go":           "package mid\n\nimport \"example.com/m/out\"\n\nconst V = out.Version\n",
		"indirect/indirect.go": "package indirect\n\nimport \"example.com/m/mid\"\n\ntype T struct{ V [mid.V]int }\n",
		"clean/clean.go":       "package clean\n\nimport \"strings\"\n\ntype T struct{ B strings.Builder }\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := &spec.Graph{Channels: []spec.Channel{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	bs := BindingSpec{Channels: map[string]string{
		"a": "example.com/m/direct.T",
		"b": "example.com/m/indirect.T",
		"c": "example.com/m/clean.T",
	}}
	b, diags := LoadBindings(g, bs, LoadConfig{Dir: dir, OutPkgPath: "example.com/m/out"})
	want := map[string]string{
		"channels.a": "import cycle example.com/m/direct -> example.com/m/out -> example.com/m/direct",
		"channels.b": "import cycle example.com/m/indirect -> example.com/m/mid -> example.com/m/out -> example.com/m/indirect",
	}
	errs := diags.Errors()
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for _, d := range errs {
		if w, ok := want[d.Path]; !ok || !strings.Contains(d.Message, w) {
			t.Errorf("%s: %s\nwant a message containing %q", d.Path, d.Message, w)
		}
	}
	if b == nil || b.Channels["c"].Type == nil {
		t.Errorf("the binding outside the cycle was not resolved: %+v", b)
	}
	// Without the output package's path (ilmekgen always knows it), or
	// for another output package, nothing is a cycle.
	if _, diags := LoadBindings(g, bs, LoadConfig{Dir: dir, OutPkgPath: "example.com/m/other"}); diags.HasErrors() {
		t.Errorf("no cycle through example.com/m/other, got %v", diags.Errors())
	}
}
