package gen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/ilmek-go/ilmek/gen"
)

// TestErrors runs the error cases of testdata/errors: each archive holds a
// spec.json, the flags of ilmekgen (without the spec) and the diagnostics
// it must print, exactly. -update rewrites the expected diagnostics.
func TestErrors(t *testing.T) {
	root := moduleRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, "testdata", "errors", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no error cases (%v)", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var flags, want string
			for _, f := range ar.Files {
				switch f.Name {
				case "flags":
					flags = string(f.Data)
				case "stderr":
					want = string(f.Data)
				default:
					if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The temporary directory has no valid package name and no
			// module: name the package, unless the flags do, and resolve
			// the bindings' Go types in this module.
			inv := parseGen(t, dir, append(append([]string{"-p", "errgraph"}, strings.Fields(flags)...), "spec.json"))
			inv.LoadDir = root
			files, diags := generate(t, inv)
			// The command prints the decoder's, the bindings' and the
			// generator's diagnostics each sorted; a case lists them as
			// one sorted list.
			gen.SortDiagnostics(diags)
			var b strings.Builder
			for _, d := range diags {
				b.WriteString(d.String())
				b.WriteByte('\n')
			}
			got := b.String()
			if !diags.HasErrors() {
				t.Errorf("generated %d files without an error; diagnostics:\n%s", len(files), got)
			}
			if updating() {
				for i := range ar.Files {
					if ar.Files[i].Name == "stderr" {
						ar.Files[i].Data = []byte(got)
					}
				}
				if err := os.WriteFile(p, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics differ (-want +got):\n%s\nrun: go test ./gen -run 'TestErrors/%s$' -update", diff, name)
			}
		})
	}
}
