package graphs

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUpToDate runs every //go:generate line of doc.go in check mode: the
// committed specs and glue must be what internal/mkgraphs writes, and each
// committed generated package what ilmekgen writes today. (The larger
// sizes are generated when the benchmarks run, so they cannot be stale.) The main module's
// TestExamplesUpToDate does not look into this module; this test does its
// job here.
func TestUpToDate(t *testing.T) {
	f, err := os.Open("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if args, ok := strings.CutPrefix(sc.Text(), "//go:generate "); ok {
			lines = append(lines, strings.Fields(args))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) != committed+1 {
		t.Errorf("doc.go has %d //go:generate lines, want one per committed package (%d) and mkgraphs", len(lines), committed)
	}
	for _, args := range lines {
		if len(args) < 3 || args[0] != "go" || (args[1] != "run" && args[1] != "tool") {
			t.Errorf("unexpected //go:generate line %q", strings.Join(args, " "))
			continue
		}
		// Insert --check (-check for mkgraphs) after the program path.
		check := "--check"
		if args[2] == "../internal/mkgraphs" {
			check = "-check"
		}
		cmdArgs := append([]string{args[1], args[2], check}, args[3:]...)
		out, err := exec.Command("go", cmdArgs...).CombinedOutput()
		if err != nil {
			t.Errorf("go %s: %v\n%s(run go generate ./graphs in the bench module)", strings.Join(cmdArgs, " "), err, out)
		}
	}
}
