package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var updateDiff = flag.Bool("update", false, "rewrite the golden outputs of ilmekgen diff under testdata/diff")

// TestDiffGolden runs "ilmekgen diff old.json new.json" (text and --json) in
// every case directory of testdata/diff and compares stdout and the exit
// status with text.golden and json.golden.
func TestDiffGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(root(t), "testdata", "diff", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no diff cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			for _, form := range []struct {
				golden string
				args   []string
			}{
				{"text.golden", []string{"diff", "old.json", "new.json"}},
				{"json.golden", []string{"diff", "--json", "old.json", "new.json"}},
			} {
				stdout, stderr, code := ilmekgen(t, dir, form.args...)
				if stderr != "" {
					t.Errorf("%v: stderr: %s", form.args, stderr)
				}
				got := fmt.Sprintf("%sexit: %d\n", stdout, code)
				path := filepath.Join(dir, form.golden)
				if *updateDiff {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/cli -run TestDiffGolden -update)", err)
				}
				if got != string(want) {
					t.Errorf("%v:\n%s\nwant:\n%s", form.args, got, want)
				}
				if form.golden == "json.golden" {
					var v struct{ Unsafe bool }
					if err := json.Unmarshal([]byte(stdout), &v); err != nil {
						t.Errorf("--json output is not JSON: %v", err)
					}
					if v.Unsafe != (code == exitUnsafe) {
						t.Errorf("unsafe=%v but exit %d", v.Unsafe, code)
					}
				}
			}
		})
	}
}

func TestDiffUsageAndInvalid(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(root(t), "testdata", "diff", "added-node", "old.json")
	copyFile(t, good, filepath.Join(dir, "old.json"))
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"nodes": [{"id": "a"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"diff", "old.json"}, exitUsage},
		{[]string{"diff", "--nope", "old.json", "old.json"}, exitUsage},
		{[]string{"diff", "old.json", "bad.json"}, exitSpec},
		{[]string{"diff", "bad.json", "old.json"}, exitSpec},
		{[]string{"diff", "old.json", "missing.json"}, exitSpec},
		{[]string{"diff", "old.json", "old.json"}, exitOK},
	}
	for _, tc := range cases {
		if _, stderr, code := ilmekgen(t, dir, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr: %s", tc.args, code, tc.code, stderr)
		}
	}
}
