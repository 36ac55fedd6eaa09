package mermaid_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// chain is a graph of nodes run one after the other, start to end.
func chain(nodes ...string) mermaid.Graph {
	var g mermaid.Graph
	prev := spec.Start
	for _, n := range nodes {
		g.Nodes = append(g.Nodes, mermaid.Node{ID: n})
		g.Edges = append(g.Edges, mermaid.Edge{From: prev, To: n})
		prev = n
	}
	g.Edges = append(g.Edges, mermaid.Edge{From: prev, To: spec.End})
	return g
}

// TestSubgraphHighlight draws where a thread stands inside its children:
// Highlight.Subgraphs marks a child's nodes inside the child's block, at
// any depth, and the class lines list every marked id once, in drawing
// order, after the diagram's edges. Without ExpandSubgraphs the children's
// marks are ignored and the diagram is the one MODEL §9.1 draws.
func TestSubgraphHighlight(t *testing.T) {
	inner := chain("sign")
	refund := chain("check", "approve", "audit")
	refund.Subgraphs = map[string]mermaid.Graph{"audit": inner}
	refund.Nodes[2] = mermaid.Node{ID: "audit", Type: "subgraph"}
	parent := chain("intake", "refund")
	parent.Subgraphs = map[string]mermaid.Graph{"refund": refund}

	for _, tc := range []struct {
		name string
		o    mermaid.Options
		want string
	}{{
		name: "paused inside the child",
		o: mermaid.Options{ExpandSubgraphs: true, Highlight: &mermaid.Highlight{
			Pending:   []string{"refund"},
			Subgraphs: map[string]*mermaid.Highlight{"refund": {Pending: []string{"approve"}}},
		}},
		want: `flowchart TD
  __start__([START])
  intake["intake"]
  subgraph refund ["⏸ refund"]
    refund___start__([START])
    refund_check["check"]
    refund_approve["⏸ approve"]
    subgraph refund_audit ["audit"]
      refund_audit___start__([START])
      refund_audit_sign["sign"]
      refund_audit___end__([END])
      refund_audit___start__ --> refund_audit_sign
      refund_audit_sign --> refund_audit___end__
    end
    refund___end__([END])
    refund___start__ --> refund_check
    refund_check --> refund_approve
    refund_approve --> refund_audit
    refund_audit --> refund___end__
  end
  __end__([END])
  __start__ --> intake
  intake --> refund
  refund --> __end__
  classDef pending stroke-width:3px,stroke-dasharray:5 3
  class refund,refund_approve pending
`,
	}, {
		name: "two levels deep, next and pending",
		o: mermaid.Options{ExpandSubgraphs: true, Highlight: &mermaid.Highlight{
			Next: []string{"refund"},
			Subgraphs: map[string]*mermaid.Highlight{"refund": {
				Next:      []string{"audit", "check"},
				Subgraphs: map[string]*mermaid.Highlight{"audit": {Pending: []string{"sign"}, Next: []string{"sign"}}},
			}},
		}},
		want: `flowchart TD
  __start__([START])
  intake["intake"]
  subgraph refund ["refund"]
    refund___start__([START])
    refund_check["check"]
    refund_approve["approve"]
    subgraph refund_audit ["audit"]
      refund_audit___start__([START])
      refund_audit_sign["⏸ sign"]
      refund_audit___end__([END])
      refund_audit___start__ --> refund_audit_sign
      refund_audit_sign --> refund_audit___end__
    end
    refund___end__([END])
    refund___start__ --> refund_check
    refund_check --> refund_approve
    refund_approve --> refund_audit
    refund_audit --> refund___end__
  end
  __end__([END])
  __start__ --> intake
  intake --> refund
  refund --> __end__
  classDef next stroke-width:3px
  class refund,refund_check,refund_audit next
  classDef pending stroke-width:3px,stroke-dasharray:5 3
  class refund_audit_sign pending
`,
	}, {
		name: "children's marks ignored when not expanded",
		o: mermaid.Options{Highlight: &mermaid.Highlight{
			Pending:   []string{"refund"},
			Subgraphs: map[string]*mermaid.Highlight{"refund": {Pending: []string{"approve"}}},
		}},
		want: `flowchart TD
  __start__([START])
  intake["intake"]
  refund["⏸ refund"]
  __end__([END])
  __start__ --> intake
  intake --> refund
  refund --> __end__
  classDef pending stroke-width:3px,stroke-dasharray:5 3
  class refund pending
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mermaid.Render(parent, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("diagram (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubgraphHighlightLeavesPlainGraphs: a graph without subgraphs draws
// the same text whatever Highlight.Subgraphs and ExpandSubgraphs say.
func TestSubgraphHighlightLeavesPlainGraphs(t *testing.T) {
	g := chain("a", "b")
	plain, err := mermaid.Render(g, mermaid.Options{Highlight: &mermaid.Highlight{Next: []string{"b"}, Pending: []string{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	const want = "flowchart TD\n  __start__([START])\n  a[\"⏸ a\"]\n  b[\"b\"]\n  __end__([END])\n  __start__ --> a\n  a --> b\n  b --> __end__\n" +
		"  classDef next stroke-width:3px\n  class b next\n  classDef pending stroke-width:3px,stroke-dasharray:5 3\n  class a pending\n"
	if plain != want {
		t.Fatalf("plain:\n%s", plain)
	}
	for _, o := range []mermaid.Options{
		{ExpandSubgraphs: true, Highlight: &mermaid.Highlight{Next: []string{"b"}, Pending: []string{"a"}}},
		{ExpandSubgraphs: true, Highlight: &mermaid.Highlight{Next: []string{"b"}, Pending: []string{"a"},
			Subgraphs: map[string]*mermaid.Highlight{"a": {Next: []string{"x"}}}}},
	} {
		if got, _ := mermaid.Render(g, o); got != want {
			t.Errorf("with %+v:\n%s", o, got)
		}
	}
}
