package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

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
//
// A case of several phases (Case.Phases: a run changes the child
// documents) has one program per phase: Drive makes the runs of the phase
// c is at (Case.AtPhase) only. A run with fork_from_run forks the thread;
// a run with kill is made by a process of its own (see killRun). When cp
// is the workers backend's, every run is a request to its queue instead
// (driveWorkers).
func Drive[S, U any](ctx context.Context, g *runtime.Graph[S, U], c *Case, fx *Effects, cp runtime.Checkpointer, decode func(json.RawMessage) (U, error), opts ...runtime.RunOption) []Observation {
	opts = append([]runtime.RunOption{runtime.WithRecursionLimit(c.Limit())}, opts...)
	if ps, ok := cp.(*pooledStore); ok {
		opts = append(opts, ps.runOptions()...)
	}
	if ws, ok := cp.(*workersStore); ok {
		return driveWorkers(ctx, g, c, fx, ws, decode, opts)
	}
	var out []Observation
	th := g.Thread(cp, Thread)
	ends := map[int]string{} // the thread's latest checkpoint after each run
	killed := false
	for i, r := range c.plan() {
		if c.Multi() && c.phaseOf(i) != c.phase {
			continue
		}
		var o Observation
		if r.Kill != "" {
			o = killRun(ctx, c, i, cp, fx)
		} else {
			t := th
			if r.ForkFromRun != nil {
				t = th.Fork(ends[*r.ForkFromRun])
			}
			// After a killed run the dead process's lease of the thread
			// stands until it expires: the next run waits it out.
			deadline := time.Now().Add(time.Minute)
			for {
				o = driveRun(ctx, t, r, fx, cp, decode, opts)
				if !killed || o.ErrorKind != "busy" || time.Now().After(deadline) || ctx.Err() != nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		killed = r.Kill != ""
		ends[i] = latestID(ctx, cp)
		out = append(out, o)
	}
	return out
}

// driveRun makes one run of a case on t and observes it.
func driveRun[S, U any](ctx context.Context, t *runtime.Thread[S, U], r Run, fx *Effects, cp runtime.Checkpointer, decode func(json.RawMessage) (U, error), opts []runtime.RunOption) Observation {
	var events func(func(runtime.Event, error) bool)
	switch {
	case r.Input != nil:
		in, err := decode(r.Input)
		if err != nil {
			return Observation{Status: "error", ErrorKind: "input", Error: err.Error(), Steps: [][]string{}, Effects: fx.Snapshot()}
		}
		events = t.Stream(ctx, in, opts...)
	case r.ResumeKeyed != nil:
		m := map[string]any{}
		for k, v := range r.ResumeKeyed {
			m[k] = decodeAny(v)
		}
		events = t.StreamResume(ctx, runtime.AnswersByID(m), opts...)
	default:
		events = t.StreamResume(ctx, runtime.Answer(decodeAny(r.Resume)), opts...)
	}
	return observe(ctx, events, cp, fx)
}

// latestID returns the id of the thread's latest checkpoint ("" when it has
// none or the store cannot say).
func latestID(ctx context.Context, cp runtime.Checkpointer) string {
	latest, err := cp.Get(ctx, Thread, "")
	if err != nil {
		return ""
	}
	return latest.ID
}

func observe(ctx context.Context, events func(func(runtime.Event, error) bool), cp runtime.Checkpointer, fx *Effects) Observation {
	o := Observation{Steps: [][]string{}}
	for ev, err := range events {
		if err != nil {
			o.Status, o.ErrorKind, o.Error = "refused", errorKind(err), err.Error()
			if !refusal(o.ErrorKind) {
				o.Status = "error"
			}
			break
		}
		if len(ev.NS) > 0 {
			continue // a subgraph's event: the case describes the root graph
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

// refusal reports whether an error of kind turned a run or resume down
// before it started (status "refused"): an answer that does not fit, or a
// thread whose checkpoint the graph's version cannot continue.
func refusal(kind string) bool { return kind == "resume" || kind == "incompatible" }

func decodeAny(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}
