package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Question is what the person is asked before the card is charged.
type Question struct {
	Text   string  `json:"text"`
	Order  string  `json:"order"`
	Amount float64 `json:"amount"`
}

// checkoutGraph builds the graph:
//
//	__start__ → place_order ─approved─→ charge → __end__
//	                        └─refused──→ cancel → __end__
//
// place_order creates the order (a journaled step) and then asks for
// approval (an interrupt). When the answer arrives, place_order runs again
// from the top: the step returns the journaled order instead of creating a
// second one, and the interrupt returns the answer.
func checkoutGraph(l *ledger) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	approved := func(v bool) spec.Predicate {
		return spec.Predicate{Channel: "approved", Op: spec.OpEq, Value: spec.Literal{Kind: spec.LitBool, Bool: v}}
	}
	return runtime.NewBuilder("checkout").
		Channel("order", "").Channel("amount", "").Channel("approved", "").
		Channel("receipt", "").Channel("status", "").
		Node("place_order", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			order, _ := s["order"].(string)
			amount, _ := s["amount"].(float64)
			created, err := runtime.Step(ctx, "create_order", func() (string, error) {
				fmt.Fprintf(l.out, "creating order %s (%.2f EUR)\n", order, amount)
				return order, l.append("create", order, amount)
			})
			if err != nil {
				return nil, err
			}
			answer, err := runtime.Interrupt[string](ctx, Question{
				Text:  fmt.Sprintf("Charge %.2f EUR to the card on file for order %s? (yes/no)", amount, created),
				Order: created, Amount: amount,
			}, runtime.WithKey("approve_charge"))
			if err != nil {
				return nil, err
			}
			return runtime.Values{"approved": answer == "yes"}, nil
		}).
		Node("charge", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			order, _ := s["order"].(string)
			amount, _ := s["amount"].(float64)
			receipt, err := runtime.Step(ctx, "charge_card", func() (string, error) {
				fmt.Fprintf(l.out, "charging %.2f EUR for order %s\n", amount, order)
				return "rcpt-" + order, l.append("charge", order, amount)
			})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"receipt": receipt, "status": "charged"}, nil
		}).
		Node("cancel", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"status": "cancelled"}, nil
		}).
		Edge(spec.Start, "place_order").
		EdgeWhen("place_order", "charge", approved(true)).
		EdgeWhen("place_order", "cancel", approved(false)).
		Edge("charge", spec.End).Edge("cancel", spec.End).
		Compile()
}

// question returns the text of a Question payload.
func question(payload json.RawMessage) string {
	var q Question
	if err := json.Unmarshal(payload, &q); err != nil || q.Text == "" {
		return string(payload)
	}
	return q.Text
}

// ledger is the file the effects are appended to: one line per order
// created and per charge made. It stands for the outside world (a shop
// database, a payment provider).
type ledger struct {
	path string
	out  io.Writer
}

func (l *ledger) append(what, order string, amount float64) error {
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s %s %.2f\n", what, order, amount); err != nil {
		f.Close()
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	return f.Close()
}

// countLedger counts the orders created and the charges made.
func countLedger(path string) (orders, charges int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		switch {
		case strings.HasPrefix(sc.Text(), "create "):
			orders++
		case strings.HasPrefix(sc.Text(), "charge "):
			charges++
		}
	}
	return orders, charges, sc.Err()
}
