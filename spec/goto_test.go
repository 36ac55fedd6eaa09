package spec

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestGotoDeclaresDynamicDestinations: a node's goto list survives the
// round trip, makes its targets reachable (no unreachable warning), and a
// graph built in Go is checked like a decoded one.
func TestGotoDeclaresDynamicDestinations(t *testing.T) {
	data, err := os.ReadFile("testdata/valid/goto.json")
	if err != nil {
		t.Fatal(err)
	}
	g, diags := Decode("goto.json", data)
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if want := []string{"measure", "__end__"}; !slices.Equal(g.Nodes[0].Goto, want) {
		t.Fatalf("Goto = %q, want %q", g.Nodes[0].Goto, want)
	}
	again, diags := Decode("again.json", g.Encode())
	if diags.HasErrors() || !Equal(g, again) || !strings.Contains(string(g.Encode()), `"goto": [
        "measure",
        "__end__"
      ]`) {
		t.Fatalf("round trip: %v\n%s", diags, g.Encode())
	}
	c := g.Clone()
	c.Nodes[0].Goto[0] = "sum"
	if g.Nodes[0].Goto[0] != "measure" {
		t.Fatal("Clone shares the goto list")
	}

	// Without the declaration, measure and sum are unreachable.
	without := strings.Replace(string(data), `, "goto": ["measure", "__end__"]`, "", 1)
	_, diags = Decode("without.json", []byte(without))
	if len(diags) != 2 || !strings.Contains(diags[0].Message, `node "measure" is unreachable`) || !strings.Contains(diags[0].Hint, `"goto"`) {
		t.Fatalf("without goto: %v", diags)
	}

	// A graph built in Go gets the same checks.
	g.Nodes[0].Goto = []string{"measure", "__start__", "nope"}
	diags = g.Validate()
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Path+": "+d.Message)
	}
	want := []string{
		`nodes[0].goto[1]: node "split": goto cannot name __start__`,
		`nodes[0].goto[2]: node "split": goto names unknown node "nope"`,
	}
	slices.Sort(msgs)
	if !slices.Equal(msgs, want) {
		t.Errorf("Validate:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}
