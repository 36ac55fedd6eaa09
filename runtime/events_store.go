package runtime

import (
	"context"
	"encoding/json"
	"fmt"
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

// Event decodes the stored event. The fields of type any (Update,
// Channels, Payload) hold their JSON values as encoding/json decodes them
// into an interface; Err is nil (Error holds its text).
func (e StoredEvent) Event() (Event, error) {
	var ev Event
	if err := json.Unmarshal(e.Data, &ev); err != nil {
		return Event{}, fmt.Errorf("runtime: decode stored event %d of run %q: %w", e.Seq, e.RunID, err)
	}
	return ev, nil
}

// EventStore is a Checkpointer that keeps a durable, bounded log of each
// run's events (Memory, the SQLite and the PostgreSQL stores implement
// it), so that a client can reconnect to a run's stream from another
// process: read the events after the last Seq it saw. A run stores its
// events when started with WithEventStore.
//
// A store keeps the events of each run's last MaxStoredEvents sequence
// numbers (Seq greater than the newest Seq minus MaxStoredEvents); older
// ones are dropped as newer ones arrive. DeleteThread deletes the thread's
// events with the rest of it; Prune (Pruner) drops the thread's events
// that happened before its oldest kept checkpoint was created.
type EventStore interface {
	// AppendEvents stores events, which belong to one run of one thread
	// and come in Seq order, in one atomic commit. A write made under a
	// lease (LeaseFromContext) is fenced as Put is.
	AppendEvents(ctx context.Context, events []StoredEvent) error
	// ReadEvents returns the run's stored events whose Seq is greater than
	// afterSeq, in Seq order, at most limit of them (all when limit <= 0).
	// A run with no stored events gives none and no error.
	ReadEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]StoredEvent, error)
}

// MaxStoredEvents is how many of a run's latest events an EventStore
// keeps.
const MaxStoredEvents = 10000

// WithEventStore stores the run's events in its checkpointer's event log
// (EventStore), whether or not the run is streamed: Invoke and Resume
// store them too. Events are encoded as they happen and written once per
// superstep (and at the run's end), in one commit each, under the run's
// lease. A write that fails is logged (level Error, to the run's logger)
// and the run goes on; a reader sees the gap in Seq. It needs Thread and a
// checkpointer that is an EventStore.
func WithEventStore() RunOption { return func(c *runConfig) { c.events = true } }

// encodeEvent turns ev into its stored form. A value in it that JSON
// cannot hold (Update, Channels or Payload) is left out and named in
// Error, so the log keeps the event.
func encodeEvent(ev Event) StoredEvent {
	data, err := json.Marshal(ev)
	if err != nil {
		ev.Update, ev.Channels, ev.Payload = nil, nil, nil
		ev.Error = fmt.Sprintf("%s (the event's value was not stored: %v)", ev.Error, err)
		data, _ = json.Marshal(ev)
	}
	return StoredEvent{RunID: ev.RunID, Seq: ev.Seq, ThreadID: ev.ThreadID, Time: ev.Time, Kind: string(ev.Type), Data: data}
}
