package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRefusesFilesThatAreNoStore: ilmek opens only a file that holds an
// ilmek store. An application's own SQLite file, an empty file and a file
// that is no SQLite database are refused with exit 1, naming the file, and
// left byte for byte as they were, with no file added beside them.
func TestRefusesFilesThatAreNoStore(t *testing.T) {
	t.Setenv(envStore, "")
	for _, c := range []struct {
		name string
		// make writes the file at path.
		make func(t *testing.T, path string)
		errs []string
	}{
		{name: "application tables", make: func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE customers (id INTEGER)"); err != nil {
				t.Fatal(err)
			}
		}, errs: []string{"is not an ilmek store", "customers", "never creates a store"}},
		{name: "empty file", make: func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, errs: []string{"is not an ilmek store", "no tables", "never creates a store"}},
		{name: "not SQLite", make: func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("a text file, not a database\n"), 200), 0o644); err != nil {
				t.Fatal(err)
			}
		}, errs: []string{"not an ilmek store", "SQLite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "other.db")
			c.make(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files := dirNames(t, dir)
			for _, args := range [][]string{{"--store", path, "threads"}, {"--store", "sqlite:" + path, "delete", "--yes", "x"}} {
				code, out, errs := ilmek(args...)
				if code != exitFail {
					t.Fatalf("ilmek %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, exitFail, out, errs)
				}
				for _, s := range append(c.errs, path) {
					if !strings.Contains(errs, s) {
						t.Errorf("ilmek %s: stderr lacks %q:\n%s", strings.Join(args, " "), s, errs)
					}
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("the file changed: %d bytes before, %d after", len(before), len(after))
			}
			if got := dirNames(t, dir); !slices.Equal(got, files) {
				t.Errorf("the directory held %v, now %v", files, got)
			}
		})
	}
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
