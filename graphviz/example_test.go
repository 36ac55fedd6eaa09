package graphviz_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/graphviz"
)

// DOT laid out as SVG in process, with no graphviz binary.
func ExampleRenderer_SVG() {
	r := graphviz.New()
	defer r.Close()
	svg, err := r.SVG(context.Background(), `digraph { start -> greet -> end }`)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := string(svg)
	fmt.Println(strings.Contains(s, "<svg"), strings.Contains(s, ">greet</text>"))
	// Output:
	// true true
}
