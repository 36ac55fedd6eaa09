package conformance

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSubgraphCases runs the cases of the subgraphs extension
// (ExtensionSubgraphs) through the spec, code and generated kinds against
// every backend, PostgreSQL included when it is configured. The generated
// kind builds a module of its own for these cases only (each parent's
// package with its children's packages wired in); -short leaves it out.
func TestSubgraphCases(t *testing.T) {
	cases, err := LoadDir(filepath.Join("testdata", "subgraphs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("%d subgraph cases, want at least 10", len(cases))
	}
	kinds := []Kind{SpecKind{}, CodeKind{}}
	if !testing.Short() {
		gk := &GeneratedKind{BuildFlags: raceFlags}
		defer gk.Close()
		if err := gk.Prepare(t.Context(), cases); err != nil {
			t.Fatal(err)
		}
		// Every valid case runs a generated package (with its children's
		// packages wired in), none is refused or left out broken.
		for _, c := range cases {
			for _, key := range phaseKeys(c) {
				p := gk.mod.pkgs[key]
				invalid := c.Expect != nil && c.Expect.Status == "invalid"
				if p == nil || p.broken != "" || (p.refused != nil) != invalid {
					t.Errorf("%s: generated package %+v (invalid expected: %v)", c.File, p, invalid)
				}
			}
		}
		kinds = append(kinds, gk)
	}
	for _, kind := range kinds {
		for _, name := range BackendNames {
			t.Run(kind.Name()+"/"+name, func(t *testing.T) {
				b, err := OpenBackend(name)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				obs, skips, err := RunBackend(t.Context(), kind, cases, b)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range cases {
					if !c.Extends(ExtensionSubgraphs) {
						t.Errorf("%s: extension %q, want %q", c.File, c.Extension, ExtensionSubgraphs)
					}
					if skips[i] != "" {
						t.Logf("skip %s: %s", c.File, skips[i])
						continue
					}
					if d := Compare(c, obs[i]); len(d) > 0 {
						t.Errorf("%s (%s):\n%s", c.File, c.About, strings.Join(d, "\n"))
					}
				}
			})
		}
	}
}
