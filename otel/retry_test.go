package otel_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// retryingStore is a Checkpointer whose leases report one retry of their
// first journal write and of their first commit to report, with the
// write's context, as the PostgreSQL store does when a connection drops.
type retryingStore struct {
	runtime.Checkpointer
	report checkpoint.RetryFunc
}

func (c retryingStore) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := c.Checkpointer.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return &retryingLease{Lease: l, thread: thread, report: c.report}, nil
}

type retryingLease struct {
	checkpoint.Lease
	thread            string
	report            checkpoint.RetryFunc
	journaled, commit bool
}

// cutErr is the error of a dropped connection.
var cutErr = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}

func (l *retryingLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	if !l.journaled {
		l.journaled = true
		l.report(ctx, checkpoint.Retry{Op: "journal", Thread: l.thread, Attempt: 1, Wait: 20 * time.Millisecond, Err: cutErr})
	}
	return l.Lease.PutJournal(ctx, taskID, entries)
}

func (l *retryingLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	if !l.commit {
		l.commit = true
		l.report(ctx, checkpoint.Retry{Op: "commit", Thread: l.thread, Attempt: 1, Wait: 20 * time.Millisecond, Err: cutErr})
	}
	return l.Lease.Commit(ctx, c)
}

// TestRetry: Observer.Retry, as a store's and a worker's RetryFunc, counts
// retried statements by op and error type (with the graph within a run)
// and adds an event to the span of the statement's context: a journal
// write's on its task's span, a commit's on the run's, a worker's claim
// on the caller's span; without a span it only counts.
func TestRetry(t *testing.T) {
	s := newSetup(t)
	g, err := runtime.NewBuilder("pay").Channel("paid", "").
		Node("charge", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			n, err := runtime.Step(ctx, "charge", func() (int, error) { return 42, nil })
			return runtime.Values{"paid": n}, err
		}).
		Edge(spec.Start, "charge").Edge("charge", spec.End).Compile(runtime.WithObserver(s.obs))
	if err != nil {
		t.Fatal(err)
	}
	store := retryingStore{Checkpointer: checkpoint.NewMemory(), report: s.obs.Retry}
	if res, err := g.Thread(store, "t1").Invoke(context.Background(), nil); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("run: %s %v", res.Status, err)
	}
	ctx, span := s.caller.Start(context.Background(), "worker")
	s.obs.Retry(ctx, checkpoint.Retry{Op: "claim", Attempt: 2, Wait: 40 * time.Millisecond, Err: cutErr})
	span.End()
	s.obs.Retry(context.Background(), checkpoint.Retry{Op: "finish", Request: 7, Attempt: 1, Wait: 20 * time.Millisecond, Err: cutErr})

	var got []string
	for _, line := range s.metrics(t) {
		if strings.HasPrefix(line, "ilmek.db.retries") {
			got = append(got, line)
		}
	}
	want := []string{
		"ilmek.db.retries{error.type=*net.OpError,ilmek.graph.name=pay,ilmek.retry.op=commit} 1",
		"ilmek.db.retries{error.type=*net.OpError,ilmek.graph.name=pay,ilmek.retry.op=journal} 1",
		"ilmek.db.retries{error.type=*net.OpError,ilmek.retry.op=claim} 1",
		"ilmek.db.retries{error.type=*net.OpError,ilmek.retry.op=finish} 1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("retry metrics (-want +got):\n%s", d)
	}

	events := map[string][]string{} // span name → its retry events
	for _, sp := range s.spans.Ended() {
		for _, e := range sp.Events() {
			if e.Name != "ilmek.db.retry" {
				continue
			}
			var b strings.Builder
			for _, a := range e.Attributes {
				switch a.Key {
				case "ilmek.retry.op", "ilmek.thread.id", "ilmek.retry.attempt", "ilmek.queue.request":
					b.WriteString(" " + string(a.Key) + "=" + a.Value.String())
				}
			}
			events[sp.Name()] = append(events[sp.Name()], strings.TrimSpace(b.String()))
		}
	}
	for name := range events {
		slices.Sort(events[name])
	}
	wantEvents := map[string][]string{
		"task charge": {"ilmek.retry.op=journal ilmek.retry.attempt=1 ilmek.thread.id=t1"},
		"run pay":     {"ilmek.retry.op=commit ilmek.retry.attempt=1 ilmek.thread.id=t1"},
		"worker":      {"ilmek.retry.op=claim ilmek.retry.attempt=2"},
	}
	if d := cmp.Diff(wantEvents, events); d != "" {
		t.Errorf("retry events by span (-want +got):\n%s", d)
	}
}
