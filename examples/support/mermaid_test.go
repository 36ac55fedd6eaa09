package main

import (
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/examples/support/supportgraph"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestGeneratedGraphDrawsItsDocument: a generated graph draws, through
// runtime.Mermaid, exactly the diagram of the document it was generated
// from, in the ilmek/1 format.
func TestGeneratedGraphDrawsItsDocument(t *testing.T) {
	g, err := supportgraph.New(nodes{shop: &fakeShop{}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := runtime.Mermaid(g, mermaid.Options{Direction: "LR"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("support.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, ds := spec.Decode("support.json", data)
	if doc == nil {
		t.Fatal(ds)
	}
	want, err := mermaid.Spec(doc, mermaid.Options{Direction: "LR"})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
