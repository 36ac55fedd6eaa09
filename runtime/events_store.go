package runtime

import (
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// WithEventStore stores the run's events in its checkpointer's event log
// (checkpoint.EventStore), whether or not the run is streamed: Invoke and Resume
// store them too. Events are encoded as they happen and stored with the
// next checkpoint the run commits, in the same atomic write; the events
// after the run's last checkpoint (run_end among them) are stored by the
// run's final write, with its thread record. Every write goes through the
// run's lease. Events whose checkpoint commit fails are kept for the next
// write; a final write that fails is logged (level Error, to the run's
// logger) and a reader sees the run end without run_end. It needs Thread
// and a checkpointer that keeps an event log (checkpoint.EventStore).
func WithEventStore() RunOption { return func(c *runConfig) { c.events = true } }

// encodeEvent turns ev into its stored form. A value in it that JSON
// cannot hold (Update, Channels or Payload) is left out and named in
// Error, so the log keeps the event.
func encodeEvent(ev Event) checkpoint.StoredEvent {
	data, err := json.Marshal(ev)
	if err != nil {
		ev.Update, ev.Channels, ev.Payload = nil, nil, nil
		ev.Error = fmt.Sprintf("%s (the event's value was not stored: %v)", ev.Error, err)
		data, _ = json.Marshal(ev)
	}
	return checkpoint.StoredEvent{RunID: ev.RunID, Seq: ev.Seq, ThreadID: ev.ThreadID, Time: ev.Time, Kind: string(ev.Type), Data: data}
}
