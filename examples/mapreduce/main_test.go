package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/examples/mapreduce/wordgraph"
	"github.com/ilmek-go/ilmek/runtime"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, "a graph is data"); err != nil {
		t.Fatal(err)
	}
	want := `superstep 1: 1 task(s) split
superstep 2: 4 task(s) measure#0 measure#1 measure#2 measure#3
superstep 3: 1 task(s) sum
lengths: [1 5 2 4]
total: 12
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestLengthsFoldInSendOrder runs a thousand words many times: the lengths
// must come back in word order however the tasks are scheduled.
func TestLengthsFoldInSendOrder(t *testing.T) {
	words := make([]string, 1000)
	want := make([]string, len(words))
	for i := range words {
		words[i] = strings.Repeat("x", i%17+1)
		want[i] = fmt.Sprint(i%17 + 1)
	}
	for range 5 {
		var out bytes.Buffer
		if err := run(context.Background(), &out, strings.Join(words, " ")); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "lengths: ["+strings.Join(want, " ")+"]") {
			t.Fatalf("lengths out of send order:\n%.300s", out.String())
		}
	}
}

// TestZeroGotoFailsTheRun: a SplitGoto that is not one of SplitGotos (its
// zero value) names no node: the run fails on the command, naming it.
func TestZeroGotoFailsTheRun(t *testing.T) {
	g, err := wordgraph.New(zeroGoto{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(context.Background(), wordgraph.Update{Words: new([]string{"a"})})
	var ut *runtime.UnknownTargetError
	if !errors.As(err, &ut) {
		t.Fatalf("err %v, want an UnknownTargetError", err)
	}
}

// zeroGoto is nodes whose splitter sends to the zero SplitGoto.
type zeroGoto struct{ nodes }

func (zeroGoto) Splitter(wordgraph.NodeID, wordgraph.SplitterConfig) (wordgraph.Node, error) {
	return func(*runtime.Ctx, wordgraph.State) (wordgraph.Update, error) {
		var d wordgraph.SplitGoto
		return wordgraph.Update{Goto: []wordgraph.Target{d.To()}}, nil
	}, nil
}
