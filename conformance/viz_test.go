package conformance_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/conformance"
)

// TestVizCases draws the reference's seven diagram cases through every
// kind that can express them (spec: the document and the graph built from
// it; code: the graph built with the Builder, routers and guards too) and
// compares byte for byte.
func TestVizCases(t *testing.T) {
	cases, err := conformance.LoadVizDir("testdata/viz")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 7 {
		t.Fatalf("%d viz cases, want 7", len(cases))
	}
	var out bytes.Buffer
	rep := conformance.RunViz(&out, cases, conformance.VizKinds)
	if rep.Passed != 12 || rep.Failed != 0 {
		t.Errorf("%d passed, %d failed; want 12 and 0:\n%s", rep.Passed, rep.Failed, out.String())
	}
	// A case whose expected text differs fails, with both texts shown; and
	// LoadDir leaves viz cases to LoadVizDir.
	dir := t.TempDir()
	for _, name := range []string{"support.json", "support.mmd"} {
		data, err := os.ReadFile(filepath.Join("testdata/viz", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "support.mmd" {
			data = bytes.Replace(data, []byte("TD"), []byte("LR"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad, err := conformance.LoadVizDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if rep := conformance.RunViz(&out, bad, conformance.VizKinds); rep.Failed != 2 || !strings.Contains(out.String(), "flowchart LR") {
		t.Errorf("a wrong .mmd: %+v\n%s", rep, out.String())
	}
	if cs, err := conformance.LoadDir(dir); err != nil || len(cs) != 0 {
		t.Errorf("LoadDir took viz cases: %v, %v", cs, err)
	}
}
