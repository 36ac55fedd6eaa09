package spec

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// readDir returns the name and content of every *.json file of testdata/dir,
// sorted by name.
func readDir(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no files in testdata/%s", dir)
	}
	files := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(filepath.Base(p), ".json")] = b
	}
	return files
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lineCol computes the 1-based line and byte column of off in doc, the
// slow and obvious way.
func lineCol(doc []byte, off int) (line, col int) {
	line, col = 1, 1
	for _, c := range doc[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
