package conformance

import (
	"context"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// brokenCheckpointer stands in for a backend that could not be opened: every
// call fails with the reason, so the case fails with it instead of the
// whole suite stopping.
type brokenCheckpointer struct{ err error }

var _ runtime.Checkpointer = brokenCheckpointer{}

func (b brokenCheckpointer) Put(context.Context, *runtime.Checkpoint, []string) error { return b.err }

func (b brokenCheckpointer) Get(context.Context, string, string) (*runtime.Checkpoint, error) {
	return nil, b.err
}

func (b brokenCheckpointer) List(context.Context, string, int) ([]*runtime.Checkpoint, error) {
	return nil, b.err
}

func (b brokenCheckpointer) PutJournal(context.Context, string, string, []checkpoint.JournalEntry) error {
	return b.err
}

func (b brokenCheckpointer) GetJournal(context.Context, string, string) ([]checkpoint.JournalEntry, error) {
	return nil, b.err
}

func (b brokenCheckpointer) DeleteThread(context.Context, string) error { return b.err }

func (b brokenCheckpointer) Lease(context.Context, string, checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	return nil, b.err
}
