package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Effects counts how many times each step function of a case really ran,
// by the step key as written in the op (before any #n suffix). It is shared
// by every task of a case and safe for concurrent use.
type Effects struct {
	mu sync.Mutex
	n  map[string]int
	// ledger, when set, gets each counted key as a line (ServeHelper).
	ledger *os.File
}

// NewEffects returns an empty counter.
func NewEffects() *Effects { return &Effects{n: map[string]int{}} }

// Count records one real execution of the step function of key and
// returns how many there have been. Node implementations written for a
// case (typed or untyped) call it inside their step functions.
func (e *Effects) Count(key string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n[key]++
	if e.ledger != nil {
		_, _ = e.ledger.WriteString(key + "\n") // in the kernel before the step returns
	}
	return e.n[key]
}

// Snapshot returns a copy of the counts.
func (e *Effects) Snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.n)
}

// Registry returns the test registry of the case-file format: the node types
// write, copy, incr, noop, fail and script, exactly as
// the case-file format defines them (README.md). Script steps count into fx.
func Registry(fx *Effects) runtime.Registry {
	return runtime.Registry{
		"write":  writeNode,
		"copy":   copyNode,
		"incr":   incrNode,
		"noop":   func(spec.Node) (runtime.NodeFunc, error) { return noop, nil },
		"fail":   failNode,
		"script": func(n spec.Node) (runtime.NodeFunc, error) { return scriptNode(n, fx) },
	}
}

func noop(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }

// config decodes a node's config into v; an absent or null config leaves v.
func config(n spec.Node, v any) error {
	if len(n.Config) == 0 || string(n.Config) == "null" {
		return nil
	}
	if err := json.Unmarshal(n.Config, v); err != nil {
		return fmt.Errorf("config of node %q (type %q): %w", n.ID, n.Type, err)
	}
	return nil
}

func writeNode(n spec.Node) (runtime.NodeFunc, error) {
	var cfg struct {
		Update json.RawMessage `json:"update"`
	}
	if err := config(n, &cfg); err != nil {
		return nil, err
	}
	return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
		if cfg.Update == nil {
			return nil, nil
		}
		var u runtime.Values // decoded afresh: every task gets its own copy
		if err := json.Unmarshal(cfg.Update, &u); err != nil {
			return nil, err
		}
		return u, nil
	}, nil
}

func copyNode(n spec.Node) (runtime.NodeFunc, error) {
	var cfg struct{ From, To string }
	if err := config(n, &cfg); err != nil {
		return nil, err
	}
	return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
		v, ok := s[cfg.From]
		if !ok {
			return nil, nil
		}
		return runtime.Values{cfg.To: v}, nil
	}, nil
}

func incrNode(n spec.Node) (runtime.NodeFunc, error) {
	var cfg struct {
		Channel string
		By      float64
	}
	if err := config(n, &cfg); err != nil {
		return nil, err
	}
	return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
		cur, _ := runtime.Get[float64](s, cfg.Channel) // unset: 0; a generated state hands typed numbers
		return runtime.Values{cfg.Channel: cur + cfg.By}, nil
	}, nil
}

func failNode(n spec.Node) (runtime.NodeFunc, error) {
	var cfg struct{ Message string }
	if err := config(n, &cfg); err != nil {
		return nil, err
	}
	return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
		return nil, errors.New(cfg.Message)
	}, nil
}

// op is one operation of a script node.
type op map[string]any

func scriptNode(n spec.Node, fx *Effects) (runtime.NodeFunc, error) {
	var cfg struct {
		Ops []op   `json:"ops"`
		To  string `json:"to"`
	}
	if err := config(n, &cfg); err != nil {
		return nil, err
	}
	return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		var results []any
		var gotos []runtime.Goto
		command := false
		if err := runOps(ctx, fx, cfg.Ops, &results, &gotos, &command); err != nil {
			return nil, err
		}
		if command {
			ctx.Command(gotos...)
		}
		if cfg.To == "" {
			return nil, nil
		}
		if results == nil {
			results = []any{}
		}
		return runtime.Values{cfg.To: results}, nil
	}, nil
}

func runOps(ctx *runtime.Ctx, fx *Effects, ops []op, results *[]any, gotos *[]runtime.Goto, command *bool) error {
	for _, o := range ops {
		switch {
		case has(o, "step"):
			key, _ := o["step"].(string)
			v, err := runtime.Step(ctx, key, func() (int, error) { return fx.Count(key), nil })
			if err != nil {
				return err
			}
			*results = append(*results, v)
		case has(o, "ask"):
			var opts []runtime.InterruptOption
			if k, ok := o["key"].(string); ok {
				opts = append(opts, runtime.WithKey(k))
			}
			v, err := runtime.Interrupt[any](ctx, o["ask"], opts...)
			if err != nil {
				return err
			}
			*results = append(*results, v)
		case has(o, "kill"):
			name, _ := o["kill"].(string)
			killSelf(name)
		case has(o, "each"):
			items, _ := o["each"].([]any)
			inner, err := innerOps(o["ops"])
			if err != nil {
				return err
			}
			for _, item := range items {
				sub := make([]op, len(inner))
				for i, in := range inner {
					sub[i] = substitute(in, itemText(item)).(map[string]any)
				}
				if err := runOps(ctx, fx, sub, results, gotos, command); err != nil {
					return err
				}
			}
		case has(o, "goto"):
			*command = true
			targets, _ := o["goto"].([]any)
			for _, t := range targets {
				name, _ := t.(string)
				*gotos = append(*gotos, runtime.To(name))
			}
			*results = append(*results, nil)
		case has(o, "send"):
			*command = true
			sends, _ := o["send"].([]any)
			for _, s := range sends {
				m, _ := s.(map[string]any)
				name, _ := m["node"].(string)
				input, _ := m["input"].(map[string]any)
				*gotos = append(*gotos, runtime.SendTo(name, runtime.Values(input)))
			}
			*results = append(*results, nil)
		default:
			return fmt.Errorf("script op %v: unknown op (want step, ask, kill, each, goto or send)", o)
		}
	}
	return nil
}

func has(o op, k string) bool { _, ok := o[k]; return ok }

func innerOps(v any) ([]op, error) {
	list, _ := v.([]any)
	out := make([]op, 0, len(list))
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("each: inner op %v is not an object", x)
		}
		out = append(out, m)
	}
	return out, nil
}

func itemText(item any) string {
	if s, ok := item.(string); ok {
		return s
	}
	b, _ := json.Marshal(item)
	return string(b)
}

// substitute returns a deep copy of v with "$item" replaced by item in every
// string value (object member names are left alone).
func substitute(v any, item string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "$item", item)
	case []any:
		out := slices.Clone(x)
		for i := range out {
			out[i] = substitute(out[i], item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, item)
		}
		return out
	case op:
		return substitute(map[string]any(x), item)
	}
	return v
}
