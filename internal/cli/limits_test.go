package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReadsAtMostTheLimit: a document that never ends (/dev/zero) is
// refused after MaxBytes+1 bytes instead of read until memory runs out.
func TestCheckReadsAtMostTheLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	_, stderr, code := ilmekgen(t, t.TempDir(), "check", "/dev/zero")
	if code != 1 || !strings.Contains(stderr, "/dev/zero:1:1: the document is over the limit of 8388608 bytes") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestUnimportablePackageName: -o …/init or -p init would generate
// `package init`, which builds but cannot be imported without an alias.
func TestUnimportablePackageName(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(root(t), "examples", "support", "support.json"), filepath.Join(dir, "support.json"))
	for _, args := range [][]string{
		{"-o", "sub/init", "support.json"},
		{"-o", "out", "-p", "init", "support.json"},
	} {
		_, stderr, code := ilmekgen(t, dir, args...)
		if code == 0 || !strings.Contains(stderr, `package name "init" cannot be imported without an alias`) {
			t.Errorf("ilmekgen %q: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Errorf("a refused generation wrote files (%v)", err)
	}
}
