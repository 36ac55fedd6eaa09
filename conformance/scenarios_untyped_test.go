package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// The untyped node implementations of the scenarios (runtime.NodeFunc over
// runtime.Values): served by a registry to the spec kind and, through the
// adapter, to the generated kind; and used by the code-built graphs, whose
// structure is written in Go.

// Values is short for runtime.Values in the scenarios.
type Values = runtime.Values

// codeGraph is a code-built graph.
type codeGraph = runtime.Graph[Values, Values]

// factory serves one NodeFunc for every node of a type.
func factory(fn runtime.NodeFunc) runtime.Factory {
	return func(spec.Node) (runtime.NodeFunc, error) { return fn, nil }
}

// configured serves a NodeFunc made from each node's config.
func configured[C any](make func(C) runtime.NodeFunc) runtime.Factory {
	return func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg C
		if len(n.Config) > 0 {
			if err := json.Unmarshal(n.Config, &cfg); err != nil {
				return nil, fmt.Errorf("node %q: config: %w", n.ID, err)
			}
		}
		return make(cfg), nil
	}
}

// counted is a step function that counts one execution of key in fx and
// returns the count.
func counted(fx *Effects, key string) func() (int, error) {
	return func() (int, error) { return fx.Count(key), nil }
}

// strs returns the strings of a list channel's value.
func strs(v any) []string {
	var out []string
	if list, ok := v.([]any); ok {
		for _, x := range list {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// --- 1. step once across interrupt and resume ---------------------------

func checkoutNode(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, _ Values) (Values, error) {
		order, err := runtime.Step(ctx, "create_order", counted(fx, "create_order"))
		if err != nil {
			return nil, err
		}
		answer, err := runtime.Interrupt[string](ctx, map[string]any{"q": "charge?"})
		if err != nil {
			return nil, err
		}
		charge, err := runtime.Step(ctx, "charge", counted(fx, "charge"))
		if err != nil {
			return nil, err
		}
		return Values{"log": []any{fmt.Sprintf("order-%d", order), answer, fmt.Sprintf("charge-%d", charge)}}, nil
	}
}

func confirmNode(_ *runtime.Ctx, s Values) (Values, error) {
	if cart, ok := s["cart"]; ok {
		return Values{"order": cart}, nil
	}
	return nil, nil
}

func stepOnceRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"checkout": factory(checkoutNode(fx)), "confirm": factory(confirmNode)}
}

func stepOnceCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	return runtime.NewBuilder("checkout").
		Channel("cart", "").Channel("order", "").Channel("log", spec.Append).
		TypedNode("checkout", "checkout", nil, checkoutNode(fx)).
		TypedNode("confirm", "confirm", nil, confirmNode).
		Edge(spec.Start, "checkout").Edge("checkout", "confirm").Edge("confirm", spec.End).
		Compile(opts...)
}

// --- 2. two interrupts in one node --------------------------------------

type approveConfig struct {
	Ask []string `json:"ask"`
}

func approveNode(fx *Effects) func(approveConfig) runtime.NodeFunc {
	return func(cfg approveConfig) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ Values) (Values, error) {
			var answers []any
			for _, who := range cfg.Ask {
				a, err := runtime.Interrupt[string](ctx, map[string]any{"who": who})
				if err != nil {
					return nil, err
				}
				answers = append(answers, a)
			}
			n, err := runtime.Step(ctx, "book", counted(fx, "book"))
			if err != nil {
				return nil, err
			}
			return Values{"answers": append(answers, fmt.Sprintf("booked-%d", n))}, nil
		}
	}
}

func twoInterruptsRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"approve": configured(approveNode(fx))}
}

func twoInterruptsCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	cfg := approveConfig{Ask: []string{"manager", "finance"}}
	return runtime.NewBuilder("approval").
		Channel("answers", spec.Append).
		TypedNode("approve", "approve", cfg, approveNode(fx)(cfg)).
		Edge(spec.Start, "approve").
		Compile(opts...)
}

// --- 3. an interrupt in a loop keeps stable keys ------------------------

func reviewNode(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, s Values) (Values, error) {
		var verdicts []any
		for _, item := range strs(s["items"]) {
			n, err := runtime.Step(ctx, "fetch", counted(fx, "fetch"))
			if err != nil {
				return nil, err
			}
			v, err := runtime.Interrupt[string](ctx, map[string]any{"item": item, "fetched": n})
			if err != nil {
				return nil, err
			}
			verdicts = append(verdicts, item+":"+v)
		}
		return Values{"verdicts": verdicts}, nil
	}
}

func interruptLoopRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"review": factory(reviewNode(fx))}
}

func interruptLoopCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	return runtime.NewBuilder("review").
		Channel("items", "").Channel("verdicts", spec.Append).
		TypedNode("review", "review", nil, reviewNode(fx)).
		Edge(spec.Start, "review").
		Compile(opts...)
}

// --- 4. task-order reduce -----------------------------------------------

type writerConfig struct {
	Value   string `json:"value"`
	DelayMs int    `json:"delay_ms"`
}

// writerNode waits delay_ms, so the tasks declared first finish last.
func writerNode(cfg writerConfig) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, _ Values) (Values, error) {
		select {
		case <-time.After(time.Duration(cfg.DelayMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return Values{"winner": cfg.Value, "trail": []any{cfg.Value}, "seen": map[string]any{"last": cfg.Value, cfg.Value: true}}, nil
	}
}

func taskOrderRegistry(*Effects) runtime.Registry {
	return runtime.Registry{"writer": configured(writerNode)}
}

func taskOrderCode(_ *Effects, opts ...runtime.Option) (*codeGraph, error) {
	b := runtime.NewBuilder("race").Channel("winner", "").Channel("trail", spec.Append).Channel("seen", spec.Merge)
	for _, w := range []writerConfig{{"slow", 40}, {"mid", 20}, {"fast", 0}} {
		b.TypedNode(w.Value, "writer", map[string]any{"value": w.Value, "delay_ms": w.DelayMs}, writerNode(w)).Edge(spec.Start, w.Value)
	}
	return b.Compile(opts...)
}

// --- 5. completed steps are not executed again after an error -----------

type stepConfig struct {
	Key string `json:"key"`
}

func stepNode(fx *Effects) func(stepConfig) runtime.NodeFunc {
	return func(cfg stepConfig) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ Values) (Values, error) {
			n, err := runtime.Step(ctx, cfg.Key, counted(fx, cfg.Key))
			if err != nil {
				return nil, err
			}
			return Values{"log": []any{fmt.Sprintf("%s-%d", cfg.Key, n)}}, nil
		}
	}
}

// auditNode fails its first call (outside any step, so every call counts).
func auditNode(fx *Effects) runtime.NodeFunc {
	return func(*runtime.Ctx, Values) (Values, error) {
		n := fx.Count("audit_call")
		if n == 1 {
			return nil, fmt.Errorf("audit service down (call %d)", n)
		}
		return Values{"log": []any{fmt.Sprintf("audited-%d", n)}}, nil
	}
}

func rerunRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"step": configured(stepNode(fx)), "audit": factory(auditNode(fx))}
}

func rerunCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	step := stepNode(fx)
	return runtime.NewBuilder("rerun").
		Channel("log", spec.Append).
		TypedNode("intake", "step", stepConfig{Key: "intake"}, step(stepConfig{Key: "intake"})).
		TypedNode("charge", "step", stepConfig{Key: "charge"}, step(stepConfig{Key: "charge"})).
		TypedNode("audit", "audit", nil, auditNode(fx)).
		Edge(spec.Start, "intake").Edge("intake", "charge").Edge("intake", "audit").
		Compile(opts...)
}

// --- 7. strict mode -----------------------------------------------------

// quoteNode asks for the price in a step only on its first call: on the
// replay it skips a journaled key, which strict mode refuses.
func quoteNode(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, _ Values) (Values, error) {
		if fx.Count("quote_call") == 1 {
			if _, err := runtime.Step(ctx, "price", counted(fx, "price")); err != nil {
				return nil, err
			}
		}
		a, err := runtime.Interrupt[string](ctx, map[string]any{"q": "accept?"})
		if err != nil {
			return nil, err
		}
		return Values{"answer": a}, nil
	}
}

func strictRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"quote": factory(quoteNode(fx))}
}

func strictCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	return runtime.NewBuilder("quote").
		Channel("answer", "").
		TypedNode("quote", "quote", nil, quoteNode(fx)).
		Edge(spec.Start, "quote").
		Compile(opts...)
}

// --- 8. concurrent pauses answered by id --------------------------------

type signConfig struct {
	Dept string `json:"dept"`
}

func signNode(fx *Effects) func(signConfig) runtime.NodeFunc {
	return func(cfg signConfig) runtime.NodeFunc {
		return func(ctx *runtime.Ctx, _ Values) (Values, error) {
			if _, err := runtime.Step(ctx, "prepare", counted(fx, "prepare")); err != nil {
				return nil, err
			}
			a, err := runtime.Interrupt[string](ctx, map[string]any{"dept": cfg.Dept})
			if err != nil {
				return nil, err
			}
			return Values{"signatures": []any{cfg.Dept + ":" + a}}, nil
		}
	}
}

func fileNode(*runtime.Ctx, Values) (Values, error) { return Values{"filed": true}, nil }

func pausesRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"sign": configured(signNode(fx)), "file": factory(fileNode)}
}

func pausesCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	sign := signNode(fx)
	return runtime.NewBuilder("signoff").
		Channel("signatures", spec.Append).Channel("filed", "").
		TypedNode("legal", "sign", signConfig{Dept: "legal"}, sign(signConfig{Dept: "legal"})).
		TypedNode("finance", "sign", signConfig{Dept: "finance"}, sign(signConfig{Dept: "finance"})).
		TypedNode("file", "file", nil, fileNode).
		Edge(spec.Start, "legal").Edge(spec.Start, "finance").Edge("legal", "file").Edge("finance", "file").
		Compile(opts...)
}

// --- 9. send fan-out ----------------------------------------------------

// sendsOf sends one worker task per item.
func sendsOf(s Values) []runtime.Goto {
	var out []runtime.Goto
	for _, item := range strs(s["items"]) {
		out = append(out, runtime.SendTo("worker", Values{"item": item}))
	}
	return out
}

// splitNode fans out with a command (the spec kind has no routers).
func splitNode(ctx *runtime.Ctx, s Values) (Values, error) {
	ctx.Command(sendsOf(s)...)
	return nil, nil
}

func workerNode(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, s Values) (Values, error) {
		if _, err := runtime.Step(ctx, "work", counted(fx, "work")); err != nil {
			return nil, err
		}
		item, _ := s["item"].(string)
		return Values{"results": []any{strings.ToUpper(item)}}, nil
	}
}

func joinNode(_ *runtime.Ctx, s Values) (Values, error) {
	return Values{"total": len(strs(s["results"]))}, nil
}

func fanoutRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"split": factory(splitNode), "worker": factory(workerNode(fx)), "join": factory(joinNode)}
}

// fanoutCode fans out with a router, which only a code-built graph has, so
// ToSpec refuses it.
func fanoutCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	return runtime.NewBuilder("fanout").
		Channel("items", "").Channel("item", "").Channel("results", spec.Append).Channel("total", "").
		TypedNode("split", "split", nil, func(*runtime.Ctx, Values) (Values, error) { return nil, nil }).
		TypedNode("worker", "worker", nil, workerNode(fx)).
		TypedNode("join", "join", nil, joinNode).
		Edge(spec.Start, "split").
		Router("split", func(s Values) ([]runtime.Goto, error) { return sendsOf(s), nil }).
		Edge("worker", "join").Edge("join", spec.End).
		Compile(opts...)
}

// --- 10. a command's goto and the order of its update -------------------

func routeNode(ctx *runtime.Ctx, s Values) (Values, error) {
	mode, _ := s["mode"].(string)
	if mode == "jump" {
		ctx.Command(runtime.To("b"))
	}
	return Values{"stage": "routed-" + mode, "path": []any{"route"}}, nil
}

type markConfig struct {
	Name string `json:"name"`
}

func markNode(cfg markConfig) runtime.NodeFunc {
	return func(_ *runtime.Ctx, s Values) (Values, error) {
		stage, _ := s["stage"].(string)
		return Values{"path": []any{cfg.Name}, "seen": cfg.Name + " saw " + stage}, nil
	}
}

func commandRegistry(*Effects) runtime.Registry {
	return runtime.Registry{"route": factory(routeNode), "mark": configured(markNode)}
}

func commandCode(_ *Effects, opts ...runtime.Option) (*codeGraph, error) {
	return runtime.NewBuilder("command").
		Channel("mode", "").Channel("stage", "").Channel("seen", "").Channel("path", spec.Append).
		TypedNode("route", "route", nil, routeNode).
		TypedNode("a", "mark", markConfig{Name: "a"}, markNode(markConfig{Name: "a"})).
		TypedNode("b", "mark", markConfig{Name: "b"}, markNode(markConfig{Name: "b"})).
		Edge(spec.Start, "route").Edge("route", "a").Edge("a", spec.End).Edge("b", spec.End).
		Compile(opts...)
}

// --- 11. retry without re-running steps ---------------------------------

// chargeNode charges in a step, then fails its first two attempts (counted
// outside any step).
func chargeNode(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, _ Values) (Values, error) {
		n, err := runtime.Step(ctx, "charge_card", counted(fx, "charge_card"))
		if err != nil {
			return nil, err
		}
		attempt := fx.Count("attempt")
		if attempt <= 2 {
			return nil, fmt.Errorf("gateway timeout (attempt %d)", attempt)
		}
		return Values{"receipt": fmt.Sprintf("charged-%d on attempt %d", n, attempt)}, nil
	}
}

func retryRegistry(fx *Effects) runtime.Registry {
	return runtime.Registry{"charge": factory(chargeNode(fx))}
}

func retryCode(fx *Effects, opts ...runtime.Option) (*codeGraph, error) {
	return runtime.NewBuilder("retry").
		Channel("receipt", "").
		TypedNode("charge", "charge", nil, chargeNode(fx)).
		Edge(spec.Start, "charge").
		Compile(opts...)
}
