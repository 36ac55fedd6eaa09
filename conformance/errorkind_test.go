package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestErrorKind pins the error_kind of every error type a run returns,
// also when it arrives wrapped, and of a few errors from real runs.
func TestErrorKind(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("outer: %w", err) }
	_, specErr := runtime.FromSpec(&spec.Graph{}, nil)
	g, err := runtime.NewBuilder("one").Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).
		Edge(spec.Start, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	_, optErr := g.Invoke(context.Background(), nil, runtime.WithRecursionLimit(-1))
	_, resumeErr := g.Thread(checkpoint.NewMemory(), "t").Resume(context.Background(), runtime.Answer(1))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"spec", &runtime.SpecError{Msg: "bad"}, "spec"},
		{"spec from FromSpec", specErr, "spec"},
		{"options", &runtime.OptionError{Msg: "bad"}, "options"},
		{"options from a run", optErr, "options"},
		{"resume", wrap(&runtime.ResumeError{Reason: runtime.ErrAmbiguousAnswer}), "resume"},
		{"resume from a run", resumeErr, "resume"},
		{"incompatible", wrap(&runtime.IncompatibleError{ThreadID: "t"}), "incompatible"},
		{"incompatible inside a node's child", &runtime.NodeError{Node: "refund", Err: &runtime.IncompatibleError{ThreadID: "t"}}, "incompatible"},
		{"busy", wrap(runtime.ErrThreadBusy), "busy"},
		{"node", wrap(&runtime.NodeError{Node: "a", Err: errors.New("x")}), "node"},
		{"node wins over what it wraps", &runtime.NodeError{Node: "a", Err: &runtime.CheckpointError{Op: "put", Err: errors.New("x")}}, "node"},
		{"reduce", wrap(&runtime.ReduceError{Err: &runtime.ChannelError{Channel: "c"}}), "reduce"},
		{"recursion limit", wrap(&runtime.RecursionLimitError{Limit: 3}), "recursion_limit"},
		{"checkpoint", wrap(&runtime.CheckpointError{Op: "put", Err: errors.New("disk full")}), "checkpoint"},
		{"aborted", fmt.Errorf("%w: %w", runtime.ErrAborted, context.Canceled), "aborted"},
		{"anything else", errors.New("odd"), "node"},
	}
	for _, tc := range tests {
		if got := errorKind(tc.err); got != tc.want {
			t.Errorf("%s: errorKind(%v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}
