package runtime

import "github.com/ilmek-go/ilmek/runtime/checkpoint"

// DoubleTexting is what happens to a new run request for a thread that
// already has one queued or running: checkpoint.DoubleTexting, the one
// policy the PostgreSQL workers' queue, the server and a schedule's
// overlap (checkpoint.Schedule.Overlap) accept.
type DoubleTexting = checkpoint.DoubleTexting

// The policies (see checkpoint.DoubleTexting).
const (
	DoubleTextReject        = checkpoint.DoubleTextReject
	DoubleTextEnqueue       = checkpoint.DoubleTextEnqueue
	DoubleTextCancelReplace = checkpoint.DoubleTextCancelReplace
)
