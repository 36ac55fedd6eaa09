// Command support runs the support-agent graph of support.json through the
// package ilmekgen generated from it (supportgraph), with local fakes for
// the LLM and the shop, and prints the event stream of two turns of one
// chat thread and the final state of each.
//
// Regenerate the package after changing support.json with go generate.
package main

//go:generate go tool ilmekgen -o supportgraph --type messages=[]string --type intent=string support.json

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ilmek-go/ilmek/examples/support/supportgraph"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "support:", err)
		os.Exit(1)
	}
}

// fakeLLM answers without a network: it classifies the last message.
type fakeLLM struct{}

func (fakeLLM) complete(model string, messages []string) (reply, intent string) {
	last := messages[len(messages)-1]
	if strings.Contains(strings.ToLower(last), "buy") {
		return "Great choice, taking you to checkout.", "buy"
	}
	return fmt.Sprintf("(%s) How can I help?", model), "chat"
}

// fakeShop checks out without a network.
type fakeShop struct{ orders int }

// nodes implements supportgraph.Nodes: one constructor per node type.
type nodes struct {
	llm  fakeLLM
	shop *fakeShop
}

// LLM builds every node of type "llm".
func (n nodes) LLM(id supportgraph.NodeID, cfg supportgraph.LLMConfig) (supportgraph.Node, error) {
	return func(ctx *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		type answer struct{ Reply, Intent string }
		a, err := runtime.Step(ctx, "complete", func() (answer, error) {
			reply, intent := n.llm.complete(cfg.Model, s.Messages)
			return answer{reply, intent}, nil
		})
		if err != nil {
			return supportgraph.Update{}, err
		}
		for _, word := range strings.Fields(a.Reply)[:2] {
			ctx.EmitToken(word, nil)
		}
		return supportgraph.Update{Messages: []string{a.Reply}, Intent: new(a.Intent)}, nil
	}, nil
}

// HTTP builds every node of type "http".
func (n nodes) HTTP(id supportgraph.NodeID, cfg supportgraph.HTTPConfig) (supportgraph.Node, error) {
	return func(ctx *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		order, err := runtime.Step(ctx, "post "+cfg.URL, func() (int, error) {
			n.shop.orders++
			return n.shop.orders, nil
		})
		if err != nil {
			return supportgraph.Update{}, err
		}
		cart := any(map[string]any{"order": order, "items": []string{"blue one"}})
		return supportgraph.Update{Cart: &cart, Messages: []string{fmt.Sprintf("Order %d placed.", order)}}, nil
	}, nil
}

func run(ctx context.Context, w io.Writer) error {
	g, err := supportgraph.New(nodes{shop: &fakeShop{}})
	if err != nil {
		return err
	}
	store := checkpoint.NewMemory()
	for _, msg := range []string{"Hello!", "I want to buy the blue one"} {
		fmt.Fprintf(w, "== user: %s\n", msg)
		in := supportgraph.Update{Messages: []string{msg}}
		var final any
		for ev, err := range g.Thread(store, "t-42").Stream(ctx, in) {
			if err != nil {
				return err
			}
			if ev.Type == runtime.EventState {
				final = ev.Channels
			}
			fmt.Fprintln(w, describe(ev))
		}
		fmt.Fprintf(w, "== state: %s\n", toJSON(final))
	}
	return nil
}

// describe writes one event as a line: sequence number, type and details.
// Run and checkpoint ids change every run, so they are left out.
func describe(ev runtime.Event) string {
	details := ""
	switch ev.Type {
	case runtime.EventStepStart:
		details = fmt.Sprintf("step=%d tasks=%v", ev.Step, ev.Tasks)
	case runtime.EventNodeStart:
		details = "node=" + ev.Node
	case runtime.EventCustom:
		details = "node=" + ev.Node + " payload=" + toJSON(ev.Payload)
	case runtime.EventNodeEnd:
		details = "node=" + ev.Node + " update=" + toJSON(ev.Update)
	case runtime.EventNodeError:
		details = "node=" + ev.Node + " error=" + ev.Error
	case runtime.EventState:
		details = fmt.Sprintf("step=%d channels=%s", ev.Step, toJSON(ev.Channels))
	case runtime.EventRunEnd:
		details = "status=" + string(ev.Status)
	}
	return strings.TrimSpace(fmt.Sprintf("%3d %-11s %s", ev.Seq, ev.Type, details))
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}
