// Package resent answers a request sent again whose run was taken before:
// what an A2A message or an MCP tool call under an idempotency key gets
// when it comes back after its answer was lost (a dropped connection, a
// restarted process, another replica). The answer is where the request's
// thread stands, and a run that a dead process cut short is continued
// from its latest checkpoint, never started again.
package resent

import (
	"context"
	"errors"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Read returns thread's latest checkpoint id ("" when it has none) and
// its record (nil when cp keeps no thread records or holds none for it),
// the record read by its key after the checkpoint; a thread with no
// checkpoint took no request (a run records its request with its first
// checkpoint), and its record is not read. A run that expects the latest
// checkpoint read (runtime.WithExpectedLatest) is refused when another
// process took the request in between.
func Read(ctx context.Context, cp runtime.Checkpointer, thread string) (latest string, info *checkpoint.ThreadInfo, err error) {
	switch c, err := cp.Get(ctx, thread, ""); {
	case errors.Is(err, runtime.ErrNotFound):
		return "", nil, nil
	case err != nil:
		return "", nil, err
	default:
		latest = c.ID
	}
	l, ok := cp.(checkpoint.ThreadLister)
	if !ok {
		return latest, nil, nil
	}
	page, err := l.ListThreads(ctx, checkpoint.ThreadQuery{ID: thread, Limit: 1})
	if err != nil {
		return "", nil, err
	}
	for i := range page.Threads {
		if page.Threads[i].ID == thread {
			return latest, &page.Threads[i], nil
		}
	}
	return latest, nil, nil
}

// Stand is where th stands, read and not changed; outcome is the last
// run's as th's record holds it (zero when the store keeps no records):
// its status (checkpoint.ThreadStatus; a run of another process is not
// seen, and a run cut short or going on elsewhere reads parked with
// nothing open), its state, its open interrupts, or its last run's
// failure (Err, the outcome's text). latest is the checkpoint read.
func Stand[S, U any](ctx context.Context, th *runtime.Thread[S, U], outcome checkpoint.ThreadOutcome) (res runtime.Result[S], latest string, err error) {
	st, err := th.State(ctx)
	if err != nil {
		return runtime.Result[S]{}, "", err
	}
	status := checkpoint.ThreadStatus(checkpoint.ThreadFacts{Checkpoint: true, Next: len(st.Checkpoint.Next), Created: st.Checkpoint.Created,
		Open: st.Open, Outcome: outcome})
	res = runtime.Result[S]{Status: status, State: st.State}
	switch {
	case status == runtime.StatusError || status == runtime.StatusAborted:
		if outcome.Error != "" {
			res.Err = errors.New(outcome.Error)
		}
	default:
		res.Pending = st.Open
	}
	return res, st.Checkpoint.ID, nil
}

// Answer is the result of a request sent again whose run was taken before
// on th, outcome the last run's as th's record holds it (zero when the
// store keeps no records): where th stands (Stand). A thread with work
// left and nothing open (its run cut short by a dead process) is run on
// from its latest checkpoint, expecting it, with opts; a refused run
// (another run holds the thread, or moved it) is an error with no Status.
func Answer[S, U any](ctx context.Context, th *runtime.Thread[S, U], outcome checkpoint.ThreadOutcome, opts ...runtime.RunOption) (runtime.Result[S], error) {
	res, latest, err := Stand(ctx, th, outcome)
	if err != nil {
		return runtime.Result[S]{}, err
	}
	if res.Status == runtime.StatusParked && len(res.Pending) == 0 {
		var none U
		return th.Invoke(ctx, none, append(opts[:len(opts):len(opts)], runtime.WithExpectedLatest(latest))...)
	}
	return res, nil
}
