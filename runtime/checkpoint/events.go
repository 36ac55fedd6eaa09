package checkpoint

import (
	"context"
	"encoding/json"
	"time"
)

// StoredEvent is one run event as an EventStore keeps it: the envelope in
// columns, the whole event (Event, as JSON) in Data.
type StoredEvent struct {
	RunID    string          `json:"run_id"`
	Seq      int64           `json:"seq"`
	ThreadID string          `json:"thread_id"`
	Time     time.Time       `json:"time"`
	Kind     string          `json:"kind"` // the event's Type
	Data     json.RawMessage `json:"data"`
}

// EventStore is a Checkpointer that keeps a durable, bounded log of each
// run's events (Memory, the SQLite and the PostgreSQL stores implement
// it), so that a client can reconnect to a run's stream from another
// process: read the events after the last Seq it saw. A run stores its
// events when started with WithEventLog.
//
// A store keeps the events of each run's last MaxStoredEvents sequence
// numbers (Seq greater than the newest Seq minus MaxStoredEvents); older
// ones are dropped as newer ones arrive. DeleteThread deletes the thread's
// events with the rest of it; Prune (Pruner) drops the thread's events
// that happened before its oldest kept checkpoint was created.
type EventStore interface {
	// AppendEvents stores events, which belong to one run of one thread
	// and come in Seq order, in one atomic commit, without a lease (a run
	// stores its events through Lease.Commit, with its checkpoints).
	AppendEvents(ctx context.Context, events []StoredEvent) error
	// ReadEvents returns the run's stored events whose Seq is greater than
	// afterSeq, in Seq order, at most limit of them (all when limit <= 0).
	// A run with no stored events gives none and no error.
	ReadEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]StoredEvent, error)
}

// MaxStoredEvents is how many of a run's latest events an EventStore
// keeps.
const MaxStoredEvents = 10000
