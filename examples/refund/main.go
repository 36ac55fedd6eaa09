// Command refund runs a support graph that uses a shared refund graph as
// one of its nodes, both generated: support.json's "refund" node is a
// subgraph node running refund.json, and the generated supportgraph
// package wires in the generated refundgraph package (ilmekgen
// --subgraph). A ticket's thread lives in a SQLite file; it pauses inside
// the child, where a person approves the refund, and the answer arrives in
// another process.
//
//	refund -db refund.db open -ticket T-7 -order A7
//	refund -db refund.db answer -ticket T-7 -id refund/approve:interrupt#0 -approve
//
// open runs the ticket's thread until it pauses inside the refund graph and
// prints the pending interrupt's path-qualified id (the parent node, then
// the child's interrupt id); answer resumes the thread with the answer to
// that id, the child continues from its own checkpoint and the thread runs
// to its end. The refund graph's order lookup and refund are journaled steps
// (runtime.Step) and print a line when their effect runs: the lookup runs
// in the first process only, the refund in the second only. README.md
// shows a session, which main_test.go replays process by process.
//
// Regenerate both packages after changing a document with go generate.
package main

//go:generate go tool ilmekgen -o refundgraph --type order=string --type amount=float64 --type approved=bool --type reference=string --type trail=[]string refund.json
//go:generate go tool ilmekgen -o supportgraph --type ticket=string --type order=string --type refund=string --type log=[]string --subgraph refund=refund.json,github.com/ilmek-go/ilmek/examples/refund/refundgraph support.json

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ilmek-go/ilmek/examples/refund/refundgraph"
	"github.com/ilmek-go/ilmek/examples/refund/supportgraph"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "refund:", err)
		os.Exit(1)
	}
}

// usage is printed for a missing or unknown command.
const usage = `usage: refund [-db FILE] COMMAND [flags]

Commands:
  open     open a ticket asking for an order's refund: -ticket ID -order ID
  answer   answer the ticket's pending approval: -ticket ID -id INTERRUPT (-approve | -decline)

Run 'refund COMMAND -h' for a command's flags.`

// orders is the shop this example refunds from: each order's amount in EUR.
var orders = map[string]float64{"A7": 49.90, "B2": 120.00}

// run parses args (the global -db, a command and its flags) and runs the
// command against the SQLite file, writing what happened to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	top := flag.NewFlagSet("refund", flag.ContinueOnError)
	top.SetOutput(out)
	top.Usage = func() { fmt.Fprintln(out, usage) }
	db := top.String("db", "refund.db", "SQLite `file` that keeps the tickets' threads")
	if err := top.Parse(args); err != nil {
		return err
	}
	if top.NArg() == 0 {
		return fmt.Errorf("no command; want open or answer\n%s", usage)
	}
	cmd, rest := top.Arg(0), top.Args()[1:]
	fs := flag.NewFlagSet("refund "+cmd, flag.ContinueOnError)
	fs.SetOutput(out)
	ticket := fs.String("ticket", "", "ticket `id`, also the id of its thread (required)")
	var order, id string
	var approve, decline bool
	switch cmd {
	case "open":
		fs.StringVar(&order, "order", "", "the order to refund (required)")
	case "answer":
		fs.StringVar(&id, "id", "", "the pending interrupt's `id`, as open printed it (required)")
		fs.BoolVar(&approve, "approve", false, "approve the refund")
		fs.BoolVar(&decline, "decline", false, "decline the refund")
	default:
		return fmt.Errorf("unknown command %q; want open or answer\n%s", cmd, usage)
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%s: unexpected argument %q; flags only (see %s -h)", cmd, fs.Arg(0), cmd)
	case *ticket == "":
		return fmt.Errorf("%s: -ticket is required", cmd)
	case cmd == "open" && order == "":
		return errors.New("open: -order is required: the order to refund")
	case cmd == "answer" && id == "":
		return errors.New("answer: -id is required: the interrupt id open printed")
	case cmd == "answer" && approve == decline:
		return errors.New("answer: give exactly one of -approve and -decline")
	}

	store, err := sqlite.Open(*db)
	if err != nil {
		return err
	}
	defer store.Close()
	g, err := supportgraph.New(support{out: out})
	if err != nil {
		return err
	}
	thread := g.Thread(store, *ticket)
	var res runtime.Result[supportgraph.State]
	latest, err := store.Get(ctx, *ticket, "")
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	if cmd == "open" {
		if latest != nil {
			return fmt.Errorf("open: ticket %s exists already (%s); give the new ticket an id of its own", *ticket, ticketState(latest, *db))
		}
		res, err = thread.Invoke(ctx, supportgraph.Update{Ticket: ticket, Order: &order})
	} else {
		if latest == nil || len(latest.Pending) == 0 {
			what := "no ticket has that id; open it first"
			if latest != nil {
				what = ticketState(latest, *db)
			}
			return fmt.Errorf("answer: ticket %s waits for no approval: %s", *ticket, what)
		}
		res, err = thread.Resume(ctx, runtime.AnswersByID(map[string]any{id: approve}))
	}
	if err != nil {
		return err
	}
	return report(out, *ticket, res)
}

// ticketState says where a stored ticket's thread stands, from its latest
// checkpoint, and what its owner can do (db is the -db flag's file).
func ticketState(latest *runtime.Checkpoint, db string) string {
	switch {
	case len(latest.Pending) > 0:
		return fmt.Sprintf("it waits for an approval: answer it with refund -db %s answer -ticket %s -id ID (-approve | -decline), the ID open printed", db, latest.ThreadID)
	case len(latest.Next) == 0:
		return "it is closed"
	default:
		return "its run failed before the refund was asked for, as open printed"
	}
}

// report prints how a run of the ticket's thread ended: each pending
// interrupt by its path-qualified id, or the ticket's log.
func report(out io.Writer, ticket string, res runtime.Result[supportgraph.State]) error {
	switch res.Status {
	case runtime.StatusInterrupted:
		for _, p := range res.Pending {
			var question string
			if err := json.Unmarshal(p.Payload, &question); err != nil {
				return fmt.Errorf("ticket %s: interrupt %s: payload: %w", ticket, p.ID, err)
			}
			fmt.Fprintf(out, "%s: waits for %s: %s\n", ticket, p.ID, question)
		}
		return nil
	case runtime.StatusDone:
		fmt.Fprintf(out, "%s: done\n", ticket)
		for _, line := range res.State.Log {
			fmt.Fprintf(out, "  %s\n", line)
		}
		return nil
	default:
		return fmt.Errorf("ticket %s: run ended %s: %v", ticket, res.Status, res.Err)
	}
}

// support implements supportgraph.Nodes; the refund graph's nodes come
// from SubgraphRefund, which supportgraph.Nodes asks for because
// support.json's refund node runs the refund graph.
type support struct{ out io.Writer }

// Triage builds the triage node: it records what the ticket asks for.
func (support) Triage(supportgraph.NodeID, supportgraph.TriageConfig) (supportgraph.Node, error) {
	return func(_ *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		return supportgraph.Update{Log: []string{"triage: a refund of order " + s.Order}}, nil
	}, nil
}

// Reply builds the reply node: it answers the customer with the refund's
// outcome, which the refund graph wrote back to the refund channel.
func (support) Reply(supportgraph.NodeID, supportgraph.ReplyConfig) (supportgraph.Node, error) {
	return func(_ *runtime.Ctx, s supportgraph.State) (supportgraph.Update, error) {
		line := "reply: the refund of order " + s.Order + " was declined"
		if s.HasRefund() {
			line = "reply: refunded, reference " + s.Refund
		}
		return supportgraph.Update{Log: []string{line}}, nil
	}, nil
}

// SubgraphRefund is the refund graph's nodes.
func (s support) SubgraphRefund() refundgraph.Nodes { return refund(s) }

// refund implements refundgraph.Nodes.
type refund struct{ out io.Writer }

// Lookup builds the check node: the order's amount, from the shop, in a
// journaled step that runs once however often the node runs.
func (r refund) Lookup(refundgraph.NodeID, refundgraph.LookupConfig) (refundgraph.Node, error) {
	return func(ctx *runtime.Ctx, s refundgraph.State) (refundgraph.Update, error) {
		amount, err := runtime.Step(ctx, "lookup", func() (float64, error) {
			a, ok := orders[s.Order]
			if !ok {
				return 0, fmt.Errorf("order %q: no such order", s.Order)
			}
			fmt.Fprintf(r.out, "step lookup: order %s paid %.2f EUR\n", s.Order, a)
			return a, nil
		})
		if err != nil {
			return refundgraph.Update{}, err
		}
		return refundgraph.Update{Amount: &amount, Trail: []string{fmt.Sprintf("refund/check: order %s, %.2f EUR", s.Order, amount)}}, nil
	}, nil
}

// Approval builds the approve node: it pauses the run on an interrupt
// until a person answers true (refund) or false (decline).
func (refund) Approval(_ refundgraph.NodeID, cfg refundgraph.ApprovalConfig) (refundgraph.Node, error) {
	return func(ctx *runtime.Ctx, s refundgraph.State) (refundgraph.Update, error) {
		ok, err := runtime.Interrupt[bool](ctx, fmt.Sprintf("%s %s, %.2f EUR", cfg.Question, s.Order, s.Amount))
		if err != nil {
			return refundgraph.Update{}, err // the pause, or a failure
		}
		line := "refund/approve: declined"
		if ok {
			line = "refund/approve: approved"
		}
		return refundgraph.Update{Approved: &ok, Trail: []string{line}}, nil
	}, nil
}

// Payback builds the issue node: the refund itself, a journaled step, so a
// retried or resumed superstep never pays twice.
func (r refund) Payback(refundgraph.NodeID, refundgraph.PaybackConfig) (refundgraph.Node, error) {
	return func(ctx *runtime.Ctx, s refundgraph.State) (refundgraph.Update, error) {
		ref, err := runtime.Step(ctx, "refund", func() (string, error) {
			ref := "rf-" + strings.ToLower(s.Order)
			fmt.Fprintf(r.out, "step refund: %.2f EUR back for order %s\n", s.Amount, s.Order)
			return ref, nil
		})
		if err != nil {
			return refundgraph.Update{}, err
		}
		return refundgraph.Update{Reference: &ref, Trail: []string{"refund/issue: " + ref}}, nil
	}, nil
}
