package gen

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// fuzzSeeds are the documents FuzzGenerate starts from, besides its corpus
// in testdata/fuzz/FuzzGenerate: every file of the hostile corpus, the
// spec package's valid documents, the golden specs and the spec member of
// every conformance case.
func fuzzSeeds(t testing.TB) map[string][]byte {
	t.Helper()
	root := moduleRoot(t)
	seeds := map[string][]byte{}
	for _, pattern := range []string{
		"testdata/hostile/*.json",
		"spec/testdata/valid/*.json",
		"testdata/golden/*/spec.json",
	} {
		paths, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no seed documents match %s (%v)", pattern, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			seeds[filepath.ToSlash(rel)] = data
		}
	}
	cases, err := filepath.Glob(filepath.Join(root, "conformance", "testdata", "cases", "*.json"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no conformance cases in conformance/testdata/cases (%v)", err)
	}
	for _, p := range cases {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Spec json.RawMessage `json:"spec"`
		}
		if err := json.Unmarshal(data, &c); err != nil || len(c.Spec) == 0 {
			t.Fatalf("%s: no spec member (%v)", p, err)
		}
		rel, _ := filepath.Rel(root, p)
		seeds[filepath.ToSlash(rel)+"#spec"] = c.Spec
	}
	seeds["bigSpec(5)"] = bigSpec(5)
	return seeds
}

// fuzzing reports whether the test binary runs a fuzz target (-fuzz).
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// FuzzGenerate checks, for any document the decoder accepts, that the
// generator either refuses it with placed, printable diagnostics, or
// generates a package that passes every check of checkGenerated: it
// parses, is gofmt-stable, type-checks against the real runtime and spec
// packages, declares exactly what the document calls for, keeps every
// document string inside literals (or GoName identifiers and quoted
// comments), and embeds a document equal to its source.
//
// Under the race detector a plain go test runs only the committed corpus
// (testdata/fuzz/FuzzGenerate); the other seeds are checked without it and
// by the tests that own them.
func FuzzGenerate(f *testing.F) {
	if fuzzing() || !raceEnabled() {
		seeds := fuzzSeeds(f)
		for _, name := range sortedKeys(seeds) {
			f.Add(seeds[name])
		}
	}
	typeEnvFor(f) // load the packages once, before the first input
	f.Fuzz(func(t *testing.T, data []byte) {
		g, diags := spec.Decode("fuzz.json", data)
		if diags.HasErrors() {
			return
		}
		opts := Options{Package: "fuzzgraph", PkgPath: "example.com/fuzzgraph", Source: "fuzz.json"}
		files, diags := Generate(g, opts)
		if diags.HasErrors() {
			if len(files) != 0 {
				t.Fatalf("Generate returned files with errors: %v", diags.Errors())
			}
			checkDiagnostics(t, diags.Errors())
			return
		}
		checkGenerated(t, g, opts, files, checkOptions{})
	})
}
