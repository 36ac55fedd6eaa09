package workers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Runnable is a graph a worker can run requests on: generated or built
// from a spec document. Make one with Graph.
type Runnable interface {
	// run runs one request on thread through cp: with input (fold true),
	// continuing (fold false and resume false), or resuming with answers.
	// extra options are added to the run's.
	// from, when set, forks the thread at that checkpoint (Thread.Fork).
	run(ctx context.Context, cp runtime.Checkpointer, thread, from string, input json.RawMessage, mode runMode, extra ...runtime.RunOption) (runOutcome, error)
	// ended returns the outcome of the thread's last run when it has
	// ended (nothing planned next), ok false when it has work to do; at
	// is the checkpoint it read ("" for none).
	ended(ctx context.Context, cp runtime.Checkpointer, thread string) (out runOutcome, at string, ok bool, err error)
}

type runMode int

const (
	modeStart    runMode = iota // fold the input in
	modeContinue                // the input was folded in by an earlier claim
	modeResume                  // answer the pending interrupts with the input
	modeWake                    // wake a thread whose timer or deadline is due (Thread.Wake)
)

// runOutcome is a finished run as the worker records it.
type runOutcome struct {
	Status  runtime.Status             `json:"status"`
	State   json.RawMessage            `json:"state"`
	Pending []runtime.PendingInterrupt `json:"pending,omitempty"`
	// Supersteps counts the supersteps the run started, the one it
	// failed in included (runtime.Result.Supersteps).
	Supersteps int `json:"-"`
}

// Graph makes g runnable by workers: a start request's input decodes into
// U, a resume request's into a JSON object of answers by interrupt id, and
// the outcome's result is S encoded as JSON. opts are added to every run's
// options (WithRecursionLimit for long runs, WithLogger, WithObserver, ...);
// the thread and the checkpointer are the worker's. Whatever the
// durability (runtime.WithDurability), a start request's run writes its
// first checkpoint, the input's, with its first superstep's: the request
// holds the input durably until then.
func Graph[S, U any](g *runtime.Graph[S, U], opts ...runtime.RunOption) Runnable {
	return graphRunner[S, U]{g, opts}
}

type graphRunner[S, U any] struct {
	g    *runtime.Graph[S, U]
	opts []runtime.RunOption
}

func (r graphRunner[S, U]) run(ctx context.Context, cp runtime.Checkpointer, thread, from string, input json.RawMessage, mode runMode, extra ...runtime.RunOption) (runOutcome, error) {
	th := r.g.Thread(cp, thread)
	if from != "" {
		th = th.Fork(from)
	}
	opts := append(r.opts[:len(r.opts):len(r.opts)], extra...)
	var (
		res runtime.Result[S]
		err error
	)
	switch mode {
	case modeStart:
		var in U
		if len(input) > 0 {
			if err := json.Unmarshal(input, &in); err != nil {
				return runOutcome{}, fmt.Errorf("decode the start input: %w", err)
			}
		}
		res, err = th.Invoke(ctx, in, opts...)
	case modeContinue:
		var zero U
		res, err = th.Invoke(ctx, zero, opts...)
	case modeResume:
		var answers map[string]any
		if err := json.Unmarshal(input, &answers); err != nil {
			return runOutcome{}, fmt.Errorf("decode the answers (a JSON object by interrupt id): %w", err)
		}
		res, err = th.Resume(ctx, runtime.AnswersByID(answers), opts...)
	case modeWake:
		res, err = th.Wake(ctx, opts...)
	}
	state, merr := json.Marshal(res.State)
	if merr != nil {
		return runOutcome{}, fmt.Errorf("encode the thread's state: %w", merr)
	}
	return runOutcome{Status: res.Status, State: state, Pending: res.Pending, Supersteps: res.Supersteps}, err
}

func (r graphRunner[S, U]) ended(ctx context.Context, cp runtime.Checkpointer, thread string) (runOutcome, string, bool, error) {
	ts, err := r.g.Thread(cp, thread).State(ctx)
	if err != nil {
		return runOutcome{}, "", false, err
	}
	at := ""
	if ts.Checkpoint != nil {
		at = ts.Checkpoint.ID
	}
	if len(ts.Next) > 0 && len(ts.Open) == 0 {
		return runOutcome{}, at, false, nil
	}
	state, err := json.Marshal(ts.State)
	if err != nil {
		return runOutcome{}, at, false, fmt.Errorf("encode the thread's state: %w", err)
	}
	out := runOutcome{Status: runtime.StatusDone, State: state}
	if len(ts.Open) > 0 {
		// A thread parked on timers is not waiting on a person.
		out.Status, out.Pending = checkpoint.PauseStatus(ts.Open), ts.Open
	}
	return out, at, true, nil
}
