package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/command/commandgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/fanout/fanoutgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/interruptloop/interruptloopgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/pauses/pausesgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/rerun/rerungraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/retry/retrygraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/steponce/steponcegraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/strict/strictgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/taskorder/taskordergraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/twointerrupts/twointerruptsgraph"
	"github.com/ilmek-go/ilmek/runtime"
)

// The typed node implementations of the scenarios' generated packages: what
// an application writes against a package ilmekgen generated (typed state,
// typed updates, typed configs, typed gotos and sends). Each counts its
// step executions into fx like the untyped ones.

// --- 1 ---

type stepOnceNodes struct{ fx *Effects }

func (n stepOnceNodes) Checkout(steponcegraph.NodeID, steponcegraph.CheckoutConfig) (steponcegraph.Node, error) {
	return func(ctx *runtime.Ctx, _ steponcegraph.State) (steponcegraph.Update, error) {
		order, err := runtime.Step(ctx, "create_order", func() (string, error) {
			return fmt.Sprintf("order-%d", n.fx.Count("create_order")), nil
		})
		if err != nil {
			return steponcegraph.Update{}, err
		}
		answer, err := runtime.Interrupt[string](ctx, map[string]string{"q": "charge?"})
		if err != nil {
			return steponcegraph.Update{}, err
		}
		charge, err := runtime.Step(ctx, "charge", func() (string, error) {
			return fmt.Sprintf("charge-%d", n.fx.Count("charge")), nil
		})
		if err != nil {
			return steponcegraph.Update{}, err
		}
		return steponcegraph.Update{Log: []string{order, answer, charge}}, nil
	}, nil
}

func (stepOnceNodes) Confirm(steponcegraph.NodeID, steponcegraph.ConfirmConfig) (steponcegraph.Node, error) {
	return func(_ *runtime.Ctx, s steponcegraph.State) (steponcegraph.Update, error) {
		if !s.HasCart() {
			return steponcegraph.Update{}, nil
		}
		return steponcegraph.Update{Order: new(s.Cart)}, nil
	}, nil
}

// --- 2 ---

type twoInterruptsNodes struct{ fx *Effects }

func (n twoInterruptsNodes) Approve(_ twointerruptsgraph.NodeID, cfg twointerruptsgraph.ApproveConfig) (twointerruptsgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ twointerruptsgraph.State) (twointerruptsgraph.Update, error) {
		var answers []string
		for _, who := range cfg.Ask {
			a, err := runtime.Interrupt[string](ctx, map[string]string{"who": who})
			if err != nil {
				return twointerruptsgraph.Update{}, err
			}
			answers = append(answers, a)
		}
		booked, err := runtime.Step(ctx, "book", func() (int, error) { return n.fx.Count("book"), nil })
		if err != nil {
			return twointerruptsgraph.Update{}, err
		}
		return twointerruptsgraph.Update{Answers: append(answers, fmt.Sprintf("booked-%d", booked))}, nil
	}, nil
}

// --- 3 ---

type interruptLoopNodes struct{ fx *Effects }

func (n interruptLoopNodes) Review(interruptloopgraph.NodeID, interruptloopgraph.ReviewConfig) (interruptloopgraph.Node, error) {
	return func(ctx *runtime.Ctx, s interruptloopgraph.State) (interruptloopgraph.Update, error) {
		var verdicts []string
		for _, item := range s.Items {
			fetched, err := runtime.Step(ctx, "fetch", func() (int, error) { return n.fx.Count("fetch"), nil })
			if err != nil {
				return interruptloopgraph.Update{}, err
			}
			v, err := runtime.Interrupt[string](ctx, map[string]any{"item": item, "fetched": fetched})
			if err != nil {
				return interruptloopgraph.Update{}, err
			}
			verdicts = append(verdicts, item+":"+v)
		}
		return interruptloopgraph.Update{Verdicts: verdicts}, nil
	}, nil
}

// --- 4 ---

type taskOrderNodes struct{}

func (taskOrderNodes) Writer(_ taskordergraph.NodeID, cfg taskordergraph.WriterConfig) (taskordergraph.Node, error) {
	return func(ctx *runtime.Ctx, _ taskordergraph.State) (taskordergraph.Update, error) {
		select {
		case <-time.After(time.Duration(cfg.DelayMs) * time.Millisecond):
		case <-ctx.Done():
			return taskordergraph.Update{}, ctx.Err()
		}
		return taskordergraph.Update{
			Winner: new(cfg.Value),
			Trail:  []string{cfg.Value},
			Seen:   map[string]any{"last": cfg.Value, cfg.Value: true},
		}, nil
	}, nil
}

// --- 5 ---

type rerunNodes struct{ fx *Effects }

func (n rerunNodes) Step(_ rerungraph.NodeID, cfg rerungraph.StepConfig) (rerungraph.Node, error) {
	return func(ctx *runtime.Ctx, _ rerungraph.State) (rerungraph.Update, error) {
		v, err := runtime.Step(ctx, cfg.Key, func() (int, error) { return n.fx.Count(cfg.Key), nil })
		if err != nil {
			return rerungraph.Update{}, err
		}
		return rerungraph.Update{Log: []string{fmt.Sprintf("%s-%d", cfg.Key, v)}}, nil
	}, nil
}

func (n rerunNodes) Audit(rerungraph.NodeID, rerungraph.AuditConfig) (rerungraph.Node, error) {
	return func(*runtime.Ctx, rerungraph.State) (rerungraph.Update, error) {
		call := n.fx.Count("audit_call")
		if call == 1 {
			return rerungraph.Update{}, fmt.Errorf("audit service down (call %d)", call)
		}
		return rerungraph.Update{Log: []string{fmt.Sprintf("audited-%d", call)}}, nil
	}, nil
}

// --- 7 ---

type strictNodes struct{ fx *Effects }

func (n strictNodes) Quote(strictgraph.NodeID, strictgraph.QuoteConfig) (strictgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ strictgraph.State) (strictgraph.Update, error) {
		if n.fx.Count("quote_call") == 1 {
			if _, err := runtime.Step(ctx, "price", func() (int, error) { return n.fx.Count("price"), nil }); err != nil {
				return strictgraph.Update{}, err
			}
		}
		a, err := runtime.Interrupt[string](ctx, map[string]string{"q": "accept?"})
		if err != nil {
			return strictgraph.Update{}, err
		}
		return strictgraph.Update{Answer: new(a)}, nil
	}, nil
}

// --- 8 ---

type pausesNodes struct{ fx *Effects }

func (n pausesNodes) Sign(_ pausesgraph.NodeID, cfg pausesgraph.SignConfig) (pausesgraph.Node, error) {
	return func(ctx *runtime.Ctx, _ pausesgraph.State) (pausesgraph.Update, error) {
		if _, err := runtime.Step(ctx, "prepare", func() (int, error) { return n.fx.Count("prepare"), nil }); err != nil {
			return pausesgraph.Update{}, err
		}
		a, err := runtime.Interrupt[string](ctx, map[string]string{"dept": cfg.Dept})
		if err != nil {
			return pausesgraph.Update{}, err
		}
		return pausesgraph.Update{Signatures: []string{cfg.Dept + ":" + a}}, nil
	}, nil
}

func (pausesNodes) File(pausesgraph.NodeID, pausesgraph.FileConfig) (pausesgraph.Node, error) {
	return func(*runtime.Ctx, pausesgraph.State) (pausesgraph.Update, error) {
		return pausesgraph.Update{Filed: new(true)}, nil
	}, nil
}

// --- 9 ---

type fanoutNodes struct{ fx *Effects }

func (fanoutNodes) Split(fanoutgraph.NodeID, fanoutgraph.SplitConfig) (fanoutgraph.Node, error) {
	return func(_ *runtime.Ctx, s fanoutgraph.State) (fanoutgraph.Update, error) {
		u := fanoutgraph.Update{Goto: []fanoutgraph.Target{}}
		for _, item := range s.Items {
			u.Goto = append(u.Goto, fanoutgraph.Send(fanoutgraph.NodeWorker, fanoutgraph.Update{Item: new(item)}))
		}
		return u, nil
	}, nil
}

func (n fanoutNodes) Worker(fanoutgraph.NodeID, fanoutgraph.WorkerConfig) (fanoutgraph.Node, error) {
	return func(ctx *runtime.Ctx, s fanoutgraph.State) (fanoutgraph.Update, error) {
		if _, err := runtime.Step(ctx, "work", func() (int, error) { return n.fx.Count("work"), nil }); err != nil {
			return fanoutgraph.Update{}, err
		}
		return fanoutgraph.Update{Results: []string{strings.ToUpper(s.Item)}}, nil
	}, nil
}

func (fanoutNodes) Join(fanoutgraph.NodeID, fanoutgraph.JoinConfig) (fanoutgraph.Node, error) {
	return func(_ *runtime.Ctx, s fanoutgraph.State) (fanoutgraph.Update, error) {
		return fanoutgraph.Update{Total: new(len(s.Results))}, nil
	}, nil
}

// --- 10 ---

type commandNodes struct{}

func (commandNodes) Route(commandgraph.NodeID, commandgraph.RouteConfig) (commandgraph.Node, error) {
	return func(_ *runtime.Ctx, s commandgraph.State) (commandgraph.Update, error) {
		u := commandgraph.Update{Stage: new("routed-" + s.Mode), Path: []string{"route"}}
		if s.Mode == "jump" {
			u.Goto = []commandgraph.Target{commandgraph.To(commandgraph.NodeB)}
		}
		return u, nil
	}, nil
}

func (commandNodes) Mark(_ commandgraph.NodeID, cfg commandgraph.MarkConfig) (commandgraph.Node, error) {
	return func(_ *runtime.Ctx, s commandgraph.State) (commandgraph.Update, error) {
		return commandgraph.Update{Path: []string{cfg.Name}, Seen: new(cfg.Name + " saw " + s.Stage)}, nil
	}, nil
}

// --- 11 ---

type retryNodes struct{ fx *Effects }

func (n retryNodes) Charge(retrygraph.NodeID, retrygraph.ChargeConfig) (retrygraph.Node, error) {
	return func(ctx *runtime.Ctx, _ retrygraph.State) (retrygraph.Update, error) {
		charged, err := runtime.Step(ctx, "charge_card", func() (int, error) { return n.fx.Count("charge_card"), nil })
		if err != nil {
			return retrygraph.Update{}, err
		}
		attempt := n.fx.Count("attempt")
		if attempt <= 2 {
			return retrygraph.Update{}, fmt.Errorf("gateway timeout (attempt %d)", attempt)
		}
		return retrygraph.Update{Receipt: new(fmt.Sprintf("charged-%d on attempt %d", charged, attempt))}, nil
	}, nil
}
