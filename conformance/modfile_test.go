package conformance

import "testing"

// TestGoModReading: the module path and go version come from go.mod as
// the go command reads it (comments, quotes, blocks), not from a line scan.
func TestGoModReading(t *testing.T) {
	for _, tc := range []struct{ name, gomod, module, goVersion string }{
		{"plain", "module example.com/a\n\ngo 1.26.0\n", "example.com/a", "1.26.0"},
		{"quoted, commented", "// the module\nmodule \"example.com/b\" // here\n\ngo 1.25 // minimum\n", "example.com/b", "1.25"},
		{"a require block naming go", "module example.com/c\n\nrequire (\n\tgo v1.0.0\n)\n", "example.com/c", ""},
		{"no go line", "module example.com/d\n", "example.com/d", ""},
		{"not a go.mod", "}{", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := modulePathOf([]byte(tc.gomod)); got != tc.module {
				t.Errorf("module %q, want %q", got, tc.module)
			}
			if got := goVersionOf([]byte(tc.gomod)); got != tc.goVersion {
				t.Errorf("go version %q, want %q", got, tc.goVersion)
			}
		})
	}
}
