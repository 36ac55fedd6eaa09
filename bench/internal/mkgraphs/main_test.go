package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/bench/workload"
)

// TestGenerateBigCached runs the -big step twice on one graph with a stub
// generator: the first run writes the spec, the glue and the package, the
// second regenerates nothing (the cache key is unchanged), and a changed
// document or generator regenerates the package.
func TestGenerateBigCached(t *testing.T) {
	dir := t.TempDir()
	// The stub stands in for ilmekgen: it records its arguments in the
	// package directory it is asked to write (-o).
	stub := filepath.Join(dir, "ilmekgen.sh")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nmkdir -p \"$3\" && echo \"$@\" >> \"$3/calls\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := []workload.Workload{{Kind: "chain", N: 200}}
	run := func(tool string) []string {
		t.Helper()
		done, err := Big(dir, ws, tool, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	if got := run(stub); !slices.Equal(got, []string{"chain200"}) {
		t.Fatalf("first run regenerated %v, want [chain200]", got)
	}
	for _, name := range []string{"_big/specs/chain-200.json", "big_chain200.go", "_big/chain200/calls"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("after the first run: %v", err)
		}
	}
	glue, err := os.ReadFile(filepath.Join(dir, "big_chain200.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"//go:build bigbench\n", `"github.com/ilmek-go/ilmek/bench/graphs/_big/chain200"`, `registerBig("chain-200", newchain200)`} {
		if !strings.Contains(string(glue), want) {
			t.Errorf("big_chain200.go lacks %q", want)
		}
	}
	if got := run(stub); len(got) != 0 {
		t.Errorf("second run regenerated %v, want nothing", got)
	}
	// Another build of the generator lives at another path.
	other := filepath.Join(dir, "other-ilmekgen.sh")
	if err := os.Link(stub, other); err != nil {
		t.Fatal(err)
	}
	if got := run(other); !slices.Equal(got, []string{"chain200"}) {
		t.Errorf("run with another generator regenerated %v, want [chain200]", got)
	}
	// A stale key (as after a change of the document) regenerates.
	if err := os.WriteFile(filepath.Join(dir, BigDir, "chain200", ".mkgraphs-hash"), []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(other); !slices.Equal(got, []string{"chain200"}) {
		t.Errorf("run after a stale key regenerated %v, want [chain200]", got)
	}
}

// TestGenerateSplit checks which graphs are committed: every kind at 100
// and fanoutsend; the other sizes are generated when benchmarks run.
func TestGenerateSplit(t *testing.T) {
	var committed, generated []string
	for _, w := range Graphs() {
		if Committed(w) {
			committed = append(committed, Package(w))
		}
	}
	for _, w := range Generated() {
		generated = append(generated, Package(w))
	}
	if want := []string{"chain100", "fanout100", "loop100", "fanoutsend"}; !slices.Equal(committed, want) {
		t.Errorf("committed = %v, want %v", committed, want)
	}
	if len(generated) != 9 || slices.Contains(generated, "chain100") {
		t.Errorf("generated = %v, want the 9 packages of sizes 200, 1000, 2000", generated)
	}
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f.Name, "200") || strings.Contains(f.Name, "1000") {
			t.Errorf("Files writes %s, a generated (not committed) graph", f.Name)
		}
	}
}
