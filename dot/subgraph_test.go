package dot

import (
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// line is a chain of nodes from START to END.
func line(nodes ...string) mermaid.Graph {
	var g mermaid.Graph
	prev := spec.Start
	for _, n := range nodes {
		g.Nodes = append(g.Nodes, mermaid.Node{ID: n})
		g.Edges = append(g.Edges, mermaid.Edge{Kind: mermaid.Static, From: prev, To: n})
		prev = n
	}
	g.Edges = append(g.Edges, mermaid.Edge{Kind: mermaid.Static, From: prev, To: spec.End})
	return g
}

// TestDiagramSubgraphs draws children as clusters: nested, with the
// parent's edges reaching the cluster's START and leaving its END, the
// child's nodes named by their path (never merged with a node of the
// same name elsewhere), and where the thread stands marked inside them.
func TestDiagramSubgraphs(t *testing.T) {
	audit := line("sign")
	refund := line("check", "approve", "audit")
	refund.Edges = append(refund.Edges, mermaid.Edge{Kind: mermaid.Router, From: "check"})
	refund.Subgraphs = map[string]mermaid.Graph{"audit": audit}
	parent := line("intake", "refund", "refund/check")
	parent.Subgraphs = map[string]mermaid.Graph{"refund": refund}

	for _, c := range []struct {
		name       string
		h          *mermaid.Highlight
		want, nope []string
	}{{
		name: "no thread",
		want: []string{
			"  compound=true;\n",
			"  subgraph \"cluster_0\" {\n    graph [label=\"refund\", id=\"node_refund\", style=\"rounded\", color=\"#444444\", fontname=\"Helvetica\", fontsize=12];\n" +
				"    \"refund/__start__\" [label=\"START\", shape=oval, id=\"node_refund/__start__\", class=\"terminal\"];\n" +
				"    \"refund/check_\" [label=\"check\", id=\"node_refund/check_\"];\n",
			"    subgraph \"cluster_1\" {\n      graph [label=\"audit\", id=\"node_refund/audit\", style=\"rounded\", color=\"#444444\", fontname=\"Helvetica\", fontsize=12];\n",
			"      \"refund/audit/sign\" [label=\"sign\", id=\"node_refund/audit/sign\"];\n",
			"    \"refund/approve\" -> \"refund/audit/__start__\" [lhead=\"cluster_1\"];\n",
			"    \"refund/audit/__end__\" -> \"refund/__end__\" [ltail=\"cluster_1\"];\n",
			"    \"refund/__router_0__\" [label=\"?\", shape=diamond];\n",
			"    \"refund/check_\" -> \"refund/__router_0__\" [style=dashed];\n",
			"  \"intake\" -> \"refund/__start__\" [lhead=\"cluster_0\"];\n",
			"  \"refund/__end__\" -> \"refund/check\" [ltail=\"cluster_0\"];\n",
			"  \"refund/check\" [label=\"refund/check\", id=\"node_refund/check\"];\n",
		},
		nope: []string{"class=\"next\"", "class=\"pending\""},
	}, {
		name: "paused two levels deep",
		h: &mermaid.Highlight{Pending: []string{"refund"}, Subgraphs: map[string]*mermaid.Highlight{
			"refund": {Pending: []string{"audit"}, Next: []string{"check"}, Subgraphs: map[string]*mermaid.Highlight{"audit": {Pending: []string{"sign"}}}},
		}},
		want: []string{
			`graph [label="refund (waiting)", id="node_refund", class="pending", style="rounded,filled"`,
			`graph [label="audit (waiting)", id="node_refund/audit", class="pending"`,
			`"refund/audit/sign" [label="sign (waiting)", id="node_refund/audit/sign", class="pending"`,
			`"refund/check_" [label="check", id="node_refund/check_", class="next"`,
		},
		nope: []string{`"refund/check" [label="refund/check", id="node_refund/check", class=`},
	}} {
		t.Run(c.name, func(t *testing.T) {
			out := Diagram(parent, c.h)
			if !strings.HasPrefix(out, "digraph G {\n") || !strings.HasSuffix(out, "}\n") || strings.Count(out, "{") != strings.Count(out, "}") {
				t.Fatalf("not a digraph:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("missing %q in:\n%s", w, out)
				}
			}
			for _, n := range c.nope {
				if strings.Contains(out, n) {
					t.Errorf("unexpected %q in:\n%s", n, out)
				}
			}
		})
	}
	// Without children nothing of the clusters is drawn.
	if out := Diagram(line("a"), &mermaid.Highlight{Subgraphs: map[string]*mermaid.Highlight{"a": {Next: []string{"x"}}}}); strings.Contains(out, "compound") || strings.Contains(out, "cluster") || strings.Contains(out, "class=") && !strings.Contains(out, "terminal") {
		t.Errorf("a graph without children:\n%s", out)
	}
}
