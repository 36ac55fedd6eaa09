package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestBuilderGoto: a code-built graph declares a node's goto list as a
// document does: a command to a declared node runs, any other fails the
// run with an UndeclaredGotoError, and ToSpec stores the list.
func TestBuilderGoto(t *testing.T) {
	build := func(to string) *runtime.Builder {
		return runtime.NewBuilder("route").Channel("n", spec.LastWrite).
			TypedNode("pick", "pick", nil, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				ctx.Command(runtime.To(to))
				return nil, nil
			}).
			TypedNode("yes", "write", nil, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 1}, nil }).
			TypedNode("no", "write", nil, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 2}, nil }).
			Edge(spec.Start, "pick").
			Goto("pick", "yes", spec.End)
	}
	g, err := build("yes").Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), nil)
	if err != nil || res.State["n"] != 1.0 {
		t.Fatalf("a declared goto: %v %v", res.State, err)
	}
	doc, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"yes", spec.End}, doc.Nodes[0].Goto); d != "" {
		t.Errorf("ToSpec's goto list (-want +got):\n%s", d)
	}

	g, err = build("no").Compile()
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(context.Background(), nil)
	var ue *runtime.UndeclaredGotoError
	if !errors.As(err, &ue) || ue.Node != "pick" || ue.Target != "no" {
		t.Fatalf("an undeclared goto: err %v, want an UndeclaredGotoError of pick naming no", err)
	}
}

func TestBuilderGotoRefusesBadLists(t *testing.T) {
	ok := func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		decl func(*runtime.Builder) *runtime.Builder
		want string
	}{
		{"unknown node", func(b *runtime.Builder) *runtime.Builder { return b.Goto("ghost", "a") }, `Goto of unknown node "ghost"`},
		{"unknown target", func(b *runtime.Builder) *runtime.Builder { return b.Goto("a", "ghost") }, `declares goto to unknown node "ghost"`},
		{"the entry", func(b *runtime.Builder) *runtime.Builder { return b.Goto("a", spec.Start) }, "cannot route to the entry"},
		{"twice", func(b *runtime.Builder) *runtime.Builder { return b.Goto("a", "a", "a") }, `declares goto "a" twice`},
		{"empty", func(b *runtime.Builder) *runtime.Builder { return b.Goto("a") }, "empty goto list"},
		{"two calls", func(b *runtime.Builder) *runtime.Builder { return b.Goto("a", "a").Goto("a", spec.End) }, "declares its goto list twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := runtime.NewBuilder("bad").Channel("n", spec.LastWrite).Node("a", ok).Edge(spec.Start, "a")
			_, err := tc.decl(b).Compile()
			var se *runtime.SpecError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile: %v, want a SpecError saying %q", err, tc.want)
			}
		})
	}
}
