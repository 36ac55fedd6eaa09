package gen

import (
	"flag"
	"path/filepath"
	"testing"
)

// update is -update. The tests of both packages of this directory read it:
// these through the variable, those of gen_test (goldens, error cases,
// examples), which share the test binary, through flag.Lookup.
var update = flag.Bool("update", false, "rewrite the generated golden files, the expected diagnostics of the error cases and the files derived from test tables")

const modulePath = "github.com/ilmek-go/ilmek"

// moduleRoot is the directory of go.mod, two levels above gen's tests.
func moduleRoot(t testing.TB) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
