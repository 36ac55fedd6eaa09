package workersqueue

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestOutcome: the queue's states map onto the server's statuses; an end
// with no status (a request refused before it ran) is an error, never "".
func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		state      string
		err        string
		want       runtime.Status
		wantErrTxt string
	}{
		{"queued", "", runtime.StatusNew, ""},
		{"running", "", runtime.StatusRunning, ""},
		{"done", "", runtime.StatusDone, ""},
		{"interrupted", "", runtime.StatusInterrupted, ""},
		{"error", "boom", runtime.StatusError, "boom"},
		{"aborted", "stopped", runtime.StatusAborted, "stopped"},
		{"cancelled", "", runtime.StatusAborted, "cancelled before it started"},
		{"", "decode the start input: not an object", runtime.StatusError, "decode the start input: not an object"},
		{"exploded", "", runtime.StatusError, `the request ended in state "exploded"`},
	} {
		got, err := outcome(workers.Outcome{Thread: "t", State: c.state, Error: c.err, Runs: []string{"r"}}, nil)
		if err != nil || got.Status != c.want || got.Error != c.wantErrTxt || got.Thread != "t" || len(got.Runs) != 1 {
			t.Errorf("state %q: %+v, %v; want %s %q", c.state, got, err, c.want, c.wantErrTxt)
		}
		if got.Ended() == (c.want == runtime.StatusNew || c.want == runtime.StatusRunning) {
			t.Errorf("state %q: Ended() = %v", c.state, got.Ended())
		}
	}
	if _, err := outcome(workers.Outcome{}, fmt.Errorf("read: %w", workers.ErrNoRequest)); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("no request: %v", err)
	}
	a := New(nil)
	if _, err := a.Outcome(context.Background(), "x1"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("malformed id: %v", err)
	}
}
