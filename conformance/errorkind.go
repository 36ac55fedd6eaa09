package conformance

import (
	"errors"

	"github.com/ilmek-go/ilmek/runtime"
)

// errorKind classifies an error from a run in the terms the case files use
// for error_kind: "spec", "options", "resume", "incompatible", "busy", "node", "reduce",
// "recursion_limit", "checkpoint", "aborted", or "" when err is nil. It
// reads nothing but the runtime's error types and sentinels (errors.As and
// errors.Is), as a user of the runtime does; an error of none of them is
// counted as the node's ("node").
// Where one error matches several types, the first in the order below
// names it.
func errorKind(err error) string {
	var (
		ne *runtime.NodeError
		re *runtime.ReduceError
		rl *runtime.RecursionLimitError
		rs *runtime.ResumeError
		se *runtime.SpecError
		ce *runtime.CheckpointError
		oe *runtime.OptionError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return "spec"
	case errors.As(err, &oe):
		return "options"
	case errors.As(err, &rs):
		return "resume"
	case errors.Is(err, runtime.ErrIncompatible):
		return "incompatible"
	case errors.Is(err, runtime.ErrThreadBusy):
		return "busy"
	case errors.As(err, &ne):
		return "node"
	case errors.As(err, &re):
		return "reduce"
	case errors.As(err, &rl):
		return "recursion_limit"
	case errors.As(err, &ce):
		return "checkpoint"
	case errors.Is(err, runtime.ErrAborted):
		return "aborted"
	}
	return "node"
}
