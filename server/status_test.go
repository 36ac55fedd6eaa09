package server

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
)

// TestThreadStatus: a thread's status is the runtime's word, from its
// latest checkpoint and how its last run ended.
func TestThreadStatus(t *testing.T) {
	open := []runtime.PendingInterrupt{{ID: "review:interrupt#0"}}
	cases := []struct {
		name  string
		view  ThreadView
		ended runtime.Status
		want  runtime.Status
	}{
		{"never ran", ThreadView{}, "", runtime.StatusNew},
		{"waiting on a person", ThreadView{CheckpointID: "c", Pending: open}, runtime.StatusInterrupted, runtime.StatusInterrupted},
		{"waiting, outcome unknown", ThreadView{CheckpointID: "c", Pending: open}, "", runtime.StatusInterrupted},
		{"done", ThreadView{CheckpointID: "c"}, runtime.StatusDone, runtime.StatusDone},
		{"done, outcome unknown", ThreadView{CheckpointID: "c"}, "", runtime.StatusDone},
		{"failed", ThreadView{CheckpointID: "c", Next: []string{"n"}}, runtime.StatusError, runtime.StatusError},
		{"aborted", ThreadView{CheckpointID: "c", Next: []string{"n"}}, runtime.StatusAborted, runtime.StatusAborted},
		{"parked by the runtime", ThreadView{CheckpointID: "c", Next: []string{"n"}}, runtime.StatusParked, runtime.StatusParked},
		{"work left, no run going", ThreadView{CheckpointID: "c", Next: []string{"n"}}, "", runtime.StatusParked},
		{"answered since by a fork", ThreadView{CheckpointID: "c"}, runtime.StatusInterrupted, runtime.StatusDone},
	}
	for _, c := range cases {
		if got := threadStatus(c.view, c.ended); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
