package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// want is what the example prints; the repository README shows it.
const want = `status: interrupted
total: Order ORD-42 totals 249.9.
the desk asks: {"pending":[{"id":"agent:interrupt#0","payload":{"title":"Refund 249.9?"},"actions":[{"label":"Approve","value":{"approved":true}},{"label":"Cancel","value":{"approved":false}}]}]}
  option: Approve
  option: Cancel
status: done
reply: Refunded.
`

// TestExample runs the example end to end (MCP over the SDK's in-memory
// transport, the A2A agent over loopback HTTP) and checks what it prints,
// which is also what the README's section shows.
func TestExample(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output\n%s\nwant\n%s", out.String(), want)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not show the example's output")
	}
}
