package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/ilmek-go/ilmek/mermaid"
)

// runMermaid prints a document as a Mermaid flowchart in the ilmek/1
// format, which every implementation draws alike.
func runMermaid(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mermaid")
	dir := fs.String("direction", "TD", "flowchart direction: "+strings.Join(mermaid.Directions, ", "))
	types := fs.Bool("types", false, "write each node's type under its name (not the normative format: for people, not for diffs across implementations)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"mermaid needs exactly one SPEC"}
	}
	o := mermaid.Options{Direction: *dir, Types: *types}
	if _, err := mermaid.Render(mermaid.Graph{}, o); err != nil {
		return &usageError{strings.TrimPrefix(err.Error(), "mermaid: ")}
	}
	g, _, err := loadSpec(fs.Arg(0), stderr)
	if err != nil {
		return err
	}
	out, err := mermaid.Spec(g, o)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, out)
	return nil
}
