package approvalgraph_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/examples/approval/approvalgraph"
	"github.com/ilmek-go/ilmek/examples/approval/expense"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// nodes implements approvalgraph.Nodes: one constructor per node type of
// expense-approval.json, each given its node's id and its stored config, typed.
type nodes struct{}

func (nodes) Intake(approvalgraph.NodeID, approvalgraph.IntakeConfig) (approvalgraph.Node, error) {
	return func(_ *runtime.Ctx, s approvalgraph.State) (approvalgraph.Update, error) {
		return approvalgraph.Update{Log: []string{"submitted " + s.Claim.ID}}, nil
	}, nil
}

func (nodes) Review(_ approvalgraph.NodeID, cfg expense.ReviewConfig) (approvalgraph.Node, error) {
	return func(ctx *runtime.Ctx, s approvalgraph.State) (approvalgraph.Update, error) {
		if s.Claim.Amount < cfg.AutoApproveBelow {
			return approvalgraph.Update{Approved: new(true)}, nil
		}
		d, err := runtime.Interrupt[expense.Decision](ctx, expense.Question{Text: cfg.Question, Claim: s.Claim})
		if err != nil {
			return approvalgraph.Update{}, err
		}
		return approvalgraph.Update{Decision: &d, Approved: &d.Approved, Log: []string{"decided by " + d.Approver}}, nil
	}, nil
}

func (nodes) Payout(approvalgraph.NodeID, approvalgraph.PayoutConfig) (approvalgraph.Node, error) {
	return func(_ *runtime.Ctx, s approvalgraph.State) (approvalgraph.Update, error) {
		return approvalgraph.Update{Log: []string{fmt.Sprintf("paid %.2f to %s", s.Claim.Amount, s.Claim.Employee)}}, nil
	}, nil
}

// Build the generated graph from the application's nodes, run a claim
// until the review asks a person, and resume it with the typed answer.
// State and Update are structs over the bound types (expense.Claim,
// expense.Decision), so neither the nodes nor the caller name a channel.
func ExampleNew() {
	g, err := approvalgraph.New(nodes{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	store := checkpoint.NewMemory() // sqlite.Open or postgres.Open keep it across processes
	thread := g.Thread(store, "exp-1")

	claim := expense.Claim{ID: "exp-1", Employee: "alice", Amount: 1200, Purpose: "travel"}
	res, err := thread.Invoke(ctx, approvalgraph.Update{Claim: &claim})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "at", res.Pending[0].Node, string(res.Pending[0].Payload))

	res, err = thread.Resume(ctx, runtime.Answer(expense.Decision{Approved: true, Approver: "bob"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.State.Decision.Approver, res.State.Log)
	// Output:
	// interrupted at review {"text":"Approve this expense claim?","claim":{"id":"exp-1","employee":"alice","amount":1200,"purpose":"travel"}}
	// done bob [submitted exp-1 decided by bob paid 1200.00 to alice]
}
