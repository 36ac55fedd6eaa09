package conformance

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSubgraphCases runs the cases of the subgraphs extension
// (ExtensionSubgraphs) through the spec and code kinds against every
// backend, PostgreSQL included when it is configured.
func TestSubgraphCases(t *testing.T) {
	cases, err := LoadDir(filepath.Join("testdata", "subgraphs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 5 {
		t.Fatalf("%d subgraph cases, want at least 5", len(cases))
	}
	for _, kind := range []Kind{SpecKind{}, CodeKind{}} {
		for _, name := range BackendNames {
			t.Run(kind.Name()+"/"+name, func(t *testing.T) {
				b, err := OpenBackend(name)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				obs, err := runKind(kind, cases, b)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range cases {
					if c.Extension != ExtensionSubgraphs {
						t.Errorf("%s: extension %q, want %q", c.File, c.Extension, ExtensionSubgraphs)
					}
					if d := Compare(c, obs[i]); len(d) > 0 {
						t.Errorf("%s (%s):\n%s", c.File, c.About, strings.Join(d, "\n"))
					}
				}
			})
		}
	}
}
