// Command mapreduce fans a sentence out to one task per word with send and
// folds the results back through an append channel, on a package ilmekgen
// generated from mapreduce.json (wordgraph):
//
//	split   --send(word) x N-->  measure  --->  sum
//
// split has no static edges: its command's goto sends one measure task per
// word, each with its own state (the word). Every measure task appends the
// word's length to lengths; sum runs once, after all of them, and adds the
// lengths up. The lengths fold in send order, whatever order the tasks
// finish in.
//
// Regenerate the package after changing mapreduce.json with go generate.
package main

//go:generate go tool ilmekgen -o wordgraph --type words=[]string --type word=string --type lengths=[]int --type total=int mapreduce.json

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ilmek-go/ilmek/examples/mapreduce/wordgraph"
	"github.com/ilmek-go/ilmek/runtime"
)

func main() {
	sentence := "a graph is data and the compiler checks the wiring"
	if len(os.Args) > 1 {
		sentence = strings.Join(os.Args[1:], " ")
	}
	if err := run(context.Background(), os.Stdout, sentence); err != nil {
		fmt.Fprintln(os.Stderr, "mapreduce:", err)
		os.Exit(1)
	}
}

// nodes implements wordgraph.Nodes.
type nodes struct{}

// Splitter builds the mapper: it splits the words and sends one measure
// task per word.
func (nodes) Splitter(_ wordgraph.NodeID, cfg wordgraph.SplitterConfig) (wordgraph.Node, error) {
	return func(_ *runtime.Ctx, s wordgraph.State) (wordgraph.Update, error) {
		words := strings.Split(strings.Join(s.Words, cfg.Separator), cfg.Separator)
		targets := make([]wordgraph.Target, 0, len(words))
		for _, w := range words {
			if w == "" {
				continue
			}
			// split declares "goto": ["measure"] in the document, so
			// SplitGotos holds measure only: another node would not compile.
			targets = append(targets, wordgraph.SplitGotos.NodeMeasure.Send(wordgraph.Update{Word: new(w)}))
		}
		return wordgraph.Update{Goto: targets}, nil
	}, nil
}

// Measurer builds the worker: its state is the send's input, one word.
func (nodes) Measurer(wordgraph.NodeID, wordgraph.MeasurerConfig) (wordgraph.Node, error) {
	return func(_ *runtime.Ctx, s wordgraph.State) (wordgraph.Update, error) {
		return wordgraph.Update{Lengths: []int{len(s.Word)}}, nil
	}, nil
}

// Summer builds the reducer: it sees every length, in send order.
func (nodes) Summer(wordgraph.NodeID, wordgraph.SummerConfig) (wordgraph.Node, error) {
	return func(_ *runtime.Ctx, s wordgraph.State) (wordgraph.Update, error) {
		total := 0
		for _, n := range s.Lengths {
			total += n
		}
		return wordgraph.Update{Total: new(total)}, nil
	}, nil
}

func run(ctx context.Context, out io.Writer, sentence string) error {
	g, err := wordgraph.New(nodes{})
	if err != nil {
		return err
	}
	var final wordgraph.State
	for ev, err := range g.Stream(ctx, wordgraph.Update{Words: new(strings.Fields(sentence))}) {
		if err != nil {
			return err
		}
		switch ev.Type {
		case runtime.EventStepStart:
			fmt.Fprintf(out, "superstep %d: %d task(s) %s\n", ev.Step, len(ev.Tasks), strings.Join(ev.Tasks, " "))
		case runtime.EventState:
			final = ev.Channels.(wordgraph.State)
		case runtime.EventRunEnd:
			if ev.Err != nil {
				return ev.Err
			}
		}
	}
	fmt.Fprintf(out, "lengths: %v\ntotal: %d\n", final.Lengths, final.Total)
	return nil
}
