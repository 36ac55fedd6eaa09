package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/ilmek-go/ilmek/runtime"
)

// Observation is what one run of a case did, in the terms a case expects.
type Observation struct {
	Status    string          `json:"status"`
	ErrorKind string          `json:"error_kind,omitempty"`
	Error     string          `json:"error,omitempty"`
	Steps     [][]string      `json:"steps"`
	State     json.RawMessage `json:"state,omitempty"`
	Pending   []Pending       `json:"pending,omitempty"`
	Effects   map[string]int  `json:"effects"`
	// Retries counts the node_retry events of the run (case files do not
	// expect them; the retry scenario does).
	Retries int `json:"retries,omitempty"`
}

// Invalid is the observation of a case whose graph could not be built.
func Invalid(err error) []Observation {
	return []Observation{{Status: "invalid", ErrorKind: errorKind(err), Error: err.Error(), Steps: [][]string{}}}
}

// Thread is the thread id every case runs on.
const Thread = "thread-1"

// Drive runs every run of c, in order, on one thread of cp against g, and
// returns one observation per run. decode turns a case's input JSON into the
// program's update type. fx is the effect counter the graph's script nodes
// count into. opts are added to every run's options (after the case's
// recursion limit), e.g. runtime.WithStrictReplay(false).
func Drive[S, U any](ctx context.Context, g *runtime.Graph[S, U], c *Case, fx *Effects, cp runtime.Checkpointer, decode func(json.RawMessage) (U, error), opts ...runtime.RunOption) []Observation {
	var out []Observation
	th := g.Thread(cp, Thread)
	opts = append([]runtime.RunOption{runtime.WithRecursionLimit(c.Limit())}, opts...)
	for _, r := range c.plan() {
		var events func(func(runtime.Event, error) bool)
		switch {
		case r.Input != nil:
			in, err := decode(r.Input)
			if err != nil {
				out = append(out, Observation{Status: "error", ErrorKind: "input", Error: err.Error(), Steps: [][]string{}, Effects: fx.Snapshot()})
				continue
			}
			events = th.Stream(ctx, in, opts...)
		case r.ResumeKeyed != nil:
			m := map[string]any{}
			for k, v := range r.ResumeKeyed {
				m[k] = decodeAny(v)
			}
			events = th.StreamResume(ctx, runtime.AnswersByID(m), opts...)
		default:
			events = th.StreamResume(ctx, runtime.Answer(decodeAny(r.Resume)), opts...)
		}
		out = append(out, observe(ctx, events, cp, fx))
	}
	return out
}

func observe(ctx context.Context, events func(func(runtime.Event, error) bool), cp runtime.Checkpointer, fx *Effects) Observation {
	o := Observation{Steps: [][]string{}}
	for ev, err := range events {
		if err != nil {
			o.Status, o.ErrorKind, o.Error = "refused", errorKind(err), err.Error()
			if o.ErrorKind != "resume" {
				o.Status = "error"
			}
			break
		}
		switch ev.Type {
		case runtime.EventStepStart:
			keys := slices.Clone(ev.Tasks)
			slices.Sort(keys)
			o.Steps = append(o.Steps, keys)
		case runtime.EventNodeRetry:
			o.Retries++
		case runtime.EventInterrupt:
			for _, p := range ev.Pending {
				o.Pending = append(o.Pending, Pending{ID: p.ID, Key: p.Key, Node: p.Node, Payload: p.Payload})
			}
		case runtime.EventRunEnd:
			o.Status = string(ev.Status)
			if ev.Err != nil {
				o.ErrorKind, o.Error = errorKind(ev.Err), ev.Err.Error()
			}
		}
	}
	if o.Status == "done" {
		if latest, err := cp.Get(ctx, Thread, ""); err == nil {
			o.State = latest.Channels
		} else if !errors.Is(err, runtime.ErrNotFound) {
			o.Error = err.Error()
		}
	}
	slices.SortFunc(o.Pending, func(a, b Pending) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	o.Effects = fx.Snapshot()
	return o
}

func decodeAny(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}
