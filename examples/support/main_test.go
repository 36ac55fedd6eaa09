package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOutput runs the example and compares its output with program_out.txt.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("program_out.txt")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output differs from program_out.txt (-want +got):\n%s", diff)
	}
}
