package gen_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/internal/cli"
)

const generateLine = "//go:generate go tool ilmekgen "

// TestExamplesUpToDate regenerates, in memory, every package that a
// //go:generate line anywhere in the module builds with ilmekgen (examples,
// goldens, test programs; nested modules such as bench/ check their own),
// reading the line with ilmekgen's own parser, and fails when the committed
// output is stale. make check runs it.
func TestExamplesUpToDate(t *testing.T) {
	root := moduleRoot(t)
	found := 0
	for _, top := range []string{"."} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if p != root && strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
					return filepath.SkipDir // another module
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".gen.go") {
				return nil // generated files carry no go:generate line of their own
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, len(data)+1)
			for sc.Scan() {
				args, ok := strings.CutPrefix(sc.Text(), generateLine)
				if !ok {
					continue
				}
				found++
				inv, err := cli.ParseGen(filepath.Dir(p), strings.Fields(args), false)
				if err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				for _, specPath := range inv.Specs {
					files, diags, err := inv.Generate(specPath)
					if err != nil {
						t.Errorf("%s: %v", p, err)
						continue
					}
					if diags.HasErrors() {
						t.Errorf("%s: %v", p, diags)
						continue
					}
					rel, _ := filepath.Rel(root, filepath.Dir(p))
					compareFiles(t, inv.Out, files, "go generate ./"+filepath.ToSlash(rel))
				}
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("no //go:generate line runs ilmekgen under examples/")
	}
}
