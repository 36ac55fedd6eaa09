package checkpoint_test

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// A superstep that appended one message and set the intent is stored as
// those two writes, not the whole state; applying them to the base gives
// the new state back, byte for byte.
func ExampleDiffer_Writes() {
	prev := []byte(`{"intent":"","messages":["hi"]}`)
	next := []byte(`{"intent":"buy","messages":["hi","which size?"]}`)
	var d checkpoint.Differ
	writes, ok := d.Writes(prev, next)
	if !ok {
		fmt.Println("the channel lists differ: store a full snapshot")
		return
	}
	for _, w := range writes {
		fmt.Printf("%s append=%t %s\n", w.Channel, w.Append, w.Value)
	}
	got, err := checkpoint.ApplyDeltas(prev, writes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(got) == string(next))
	// Output:
	// intent append=false "buy"
	// messages append=true ["which size?"]
	// true
}

// Which checkpoints Prune keeps: the newest two stored (c4, c5) by the
// rule, and always the latest, branch tips and fork points (c2, where c5
// forked); c1 and c3 go.
func ExamplePruneKeep() {
	// c1 <- c2 <- c3 <- c4, and a fork c2 <- c5.
	cps := []checkpoint.PruneEntry{
		{ID: "c1", PlanID: "c1"}, {ID: "c2", ParentID: "c1", PlanID: "c2"}, {ID: "c3", ParentID: "c2", PlanID: "c3"},
		{ID: "c4", ParentID: "c3", PlanID: "c4"}, {ID: "c5", ParentID: "c2", PlanID: "c5"},
	}
	keep, err := checkpoint.PruneKeep(cps, checkpoint.PruneOptions{KeepLast: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cps {
		fmt.Println(c.ID, keep[c.ID])
	}
	// Output:
	// c1 false
	// c2 true
	// c3 false
	// c4 true
	// c5 true
}
