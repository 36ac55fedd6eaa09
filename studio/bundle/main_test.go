package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedBundle: the page in ../ui is what the sources build, and
// building twice gives the same bytes. It needs node_modules (npm ci, or
// go run . which runs it); without it the test skips, and CI checks the
// bundle with go run . -check instead.
func TestCommittedBundle(t *testing.T) {
	if _, err := os.Stat("node_modules"); errors.Is(err, os.ErrNotExist) {
		t.Skip("no node_modules: run npm ci (or go run . -check) to check the bundle")
	}
	a, err := build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := build()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two builds", name)
		}
		old, err := os.ReadFile(filepath.Join("..", "ui", name))
		if err != nil || !bytes.Equal(old, data) {
			t.Errorf("../ui/%s is not what the sources build (%v): run go generate ./studio and commit it", name, err)
		}
	}
}
