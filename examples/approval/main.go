// Command approval is an expense-approval workflow built the way an
// application uses ilmek: a document (expense-approval.json), a package
// generated from it with the channels, the review node's config and the interrupt
// bound to the application's own struct types (package expense), SQLite
// keeping each claim's thread, and a person's decision arriving in a
// second process, maybe days later.
//
//	approval -db approval.db submit -claim exp-7 -employee alice -amount 1200 -purpose "conference travel"
//	approval -db approval.db pending -claim exp-7
//	approval -db approval.db decide -claim exp-7 -approve -by bob -note "within the travel budget"
//
// submit runs the graph until the review node asks a person (a claim below
// the review node's auto_approve_below is paid at once); pending prints
// what a paused claim waits for; decide resumes the claim's thread with the
// typed answer (expense.Decision) and pays when it is an approval. Each
// command is a process of its own: all that joins them is the SQLite file.
// README.md shows a session, which main_test.go replays.
//
// Regenerate the package after changing expense-approval.json with go generate.
package main

//go:generate go tool ilmekgen -o approvalgraph --type claim=github.com/ilmek-go/ilmek/examples/approval/expense.Claim --type decision=github.com/ilmek-go/ilmek/examples/approval/expense.Decision --type approved=bool --type log=[]string --config review=github.com/ilmek-go/ilmek/examples/approval/expense.ReviewConfig expense-approval.json

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ilmek-go/ilmek/examples/approval/approvalgraph"
	"github.com/ilmek-go/ilmek/examples/approval/expense"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

// usage is printed for a missing or unknown command.
const usage = `usage: approval [-db FILE] COMMAND [flags]

Commands:
  submit   start a claim's thread: -claim ID -employee NAME -amount EUR -purpose TEXT
  pending  print what a claim waits for: -claim ID
  decide   answer a claim's review: -claim ID (-approve | -reject) -by NAME [-note TEXT]

Run 'approval COMMAND -h' for a command's flags.`

// run parses args (the global -db, a command and its flags) and runs the
// command against the SQLite file, writing what happened to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	top := flag.NewFlagSet("approval", flag.ContinueOnError)
	top.SetOutput(out)
	top.Usage = func() { fmt.Fprintln(out, usage) }
	db := top.String("db", "approval.db", "SQLite `file` that keeps the claims' threads")
	if err := top.Parse(args); err != nil {
		return err
	}
	if top.NArg() == 0 {
		return fmt.Errorf("no command; want submit, pending or decide\n%s", usage)
	}
	cmd, rest := top.Arg(0), top.Args()[1:]
	fs := flag.NewFlagSet("approval "+cmd, flag.ContinueOnError)
	fs.SetOutput(out)
	id := fs.String("claim", "", "claim `id`, also the id of its thread (required)")
	var claim expense.Claim
	var dec expense.Decision
	var reject bool
	switch cmd {
	case "submit":
		fs.StringVar(&claim.Employee, "employee", "", "who claims the expense")
		fs.Float64Var(&claim.Amount, "amount", 0, "amount in EUR")
		fs.StringVar(&claim.Purpose, "purpose", "", "what the expense was for")
	case "pending":
	case "decide":
		fs.BoolVar(&dec.Approved, "approve", false, "approve the claim")
		fs.BoolVar(&reject, "reject", false, "reject the claim")
		fs.StringVar(&dec.Approver, "by", "", "who decides (required)")
		fs.StringVar(&dec.Note, "note", "", "a note kept with the decision")
	default:
		return fmt.Errorf("unknown command %q; want submit, pending or decide\n%s", cmd, usage)
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%s: unexpected argument %q; flags only (see %s -h)", cmd, fs.Arg(0), cmd)
	case *id == "":
		return fmt.Errorf("%s: -claim is required", cmd)
	case cmd == "submit" && claim.Amount <= 0:
		return fmt.Errorf("submit: -amount %v: give the claimed amount in EUR, above 0", claim.Amount)
	case cmd == "decide" && dec.Approved == reject:
		return errors.New("decide: give exactly one of -approve and -reject")
	case cmd == "decide" && dec.Approver == "":
		return errors.New("decide: -by is required: who decides")
	}
	claim.ID = *id

	store, err := sqlite.Open(*db)
	if err != nil {
		return err
	}
	defer store.Close()
	g, err := approvalgraph.New(nodes{})
	if err != nil {
		return err
	}
	thread := g.Thread(store, *id)
	switch cmd {
	case "submit":
		switch _, err := store.Get(ctx, *id, ""); {
		case err == nil:
			return fmt.Errorf("submit: claim %s exists already; see pending -claim %s, or give the new claim an id of its own", *id, *id)
		case !errors.Is(err, runtime.ErrNotFound):
			return err
		}
		res, err := thread.Invoke(ctx, approvalgraph.Update{Claim: &claim})
		if err != nil {
			return err
		}
		return report(out, *id, res)
	case "pending":
		pend, err := thread.Pending(ctx)
		if err != nil {
			return err
		}
		if len(pend) == 0 {
			fmt.Fprintf(out, "%s: waits for nothing\n", *id)
		}
		for _, p := range pend {
			if err := printQuestion(out, *id, p); err != nil {
				return err
			}
		}
		return nil
	default: // decide
		pend, err := thread.Pending(ctx)
		if err != nil {
			return err
		}
		if len(pend) == 0 {
			return fmt.Errorf("decide: claim %s waits for no decision (never submitted, already decided, or paid at once); see pending -claim %s", *id, *id)
		}
		res, err := thread.Resume(ctx, runtime.Answer(dec))
		if err != nil {
			return err
		}
		return report(out, *id, res)
	}
}

// report prints how a run of the claim's thread ended.
func report(out io.Writer, id string, res runtime.Result[approvalgraph.State]) error {
	switch res.Status {
	case runtime.StatusInterrupted:
		for _, p := range res.Pending {
			if err := printQuestion(out, id, p); err != nil {
				return err
			}
		}
		return nil
	case runtime.StatusDone:
		fmt.Fprintf(out, "%s: done\n", id)
		for _, line := range res.State.Log {
			fmt.Fprintf(out, "  %s\n", line)
		}
		return nil
	default:
		return fmt.Errorf("claim %s: run ended %s: %v", id, res.Status, res.Err)
	}
}

// printQuestion prints one open interrupt: its node, its typed payload and
// the Go type the answer must decode into (recorded by Interrupt[T]).
func printQuestion(out io.Writer, id string, p runtime.PendingInterrupt) error {
	var q expense.Question
	if err := json.Unmarshal(p.Payload, &q); err != nil {
		return fmt.Errorf("claim %s: interrupt %s: payload: %w", id, p.ID, err)
	}
	fmt.Fprintf(out, "%s: waits at %s: %s %.2f EUR for %s (%s)\n", id, p.Node, q.Text, q.Claim.Amount, q.Claim.Employee, q.Claim.Purpose)
	if p.Expects != nil {
		fmt.Fprintf(out, "  the answer is a %s\n", p.Expects.Type)
	}
	return nil
}

// nodes implements approvalgraph.Nodes: one constructor per node type.
type nodes struct{}

// Intake builds the submit node: it records the claim.
func (nodes) Intake(approvalgraph.NodeID, approvalgraph.IntakeConfig) (approvalgraph.Node, error) {
	return func(_ *runtime.Ctx, s approvalgraph.State) (approvalgraph.Update, error) {
		c := s.Claim
		return approvalgraph.Update{Log: []string{fmt.Sprintf("submitted: %.2f EUR for %s (%s)", c.Amount, c.Employee, c.Purpose)}}, nil
	}, nil
}

// Review builds the review node from its bound config: a claim below
// AutoApproveBelow is approved at once; any other pauses the run on a typed
// interrupt until a person's expense.Decision arrives.
func (nodes) Review(_ approvalgraph.NodeID, cfg expense.ReviewConfig) (approvalgraph.Node, error) {
	return func(ctx *runtime.Ctx, s approvalgraph.State) (approvalgraph.Update, error) {
		if s.Claim.Amount < cfg.AutoApproveBelow {
			return approvalgraph.Update{
				Approved: new(true),
				Log:      []string{fmt.Sprintf("approved at once: below %.2f EUR", cfg.AutoApproveBelow)},
			}, nil
		}
		d, err := runtime.Interrupt[expense.Decision](ctx, expense.Question{Text: cfg.Question, Claim: s.Claim})
		if err != nil {
			return approvalgraph.Update{}, err // the pause, or a failure
		}
		line := "rejected by " + d.Approver
		if d.Approved {
			line = "approved by " + d.Approver
		}
		if d.Note != "" {
			line += ": " + d.Note
		}
		return approvalgraph.Update{Decision: &d, Approved: &d.Approved, Log: []string{line}}, nil
	}, nil
}

// Payout builds the pay node. The payment is a journaled step: a retried or
// resumed superstep replays it instead of paying twice.
func (nodes) Payout(approvalgraph.NodeID, approvalgraph.PayoutConfig) (approvalgraph.Node, error) {
	return func(ctx *runtime.Ctx, s approvalgraph.State) (approvalgraph.Update, error) {
		ref, err := runtime.Step(ctx, "pay", func() (string, error) {
			return "pay-" + strings.ToUpper(s.Claim.ID), nil // a payment provider's reference
		})
		if err != nil {
			return approvalgraph.Update{}, err
		}
		return approvalgraph.Update{Log: []string{fmt.Sprintf("paid: %.2f EUR to %s, reference %s", s.Claim.Amount, s.Claim.Employee, ref)}}, nil
	}, nil
}
