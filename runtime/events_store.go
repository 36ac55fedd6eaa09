package runtime

import (
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

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
func encodeEvent(ev Event) checkpoint.StoredEvent {
	data, err := json.Marshal(ev)
	if err != nil {
		ev.Update, ev.Channels, ev.Payload = nil, nil, nil
		ev.Error = fmt.Sprintf("%s (the event's value was not stored: %v)", ev.Error, err)
		data, _ = json.Marshal(ev)
	}
	return checkpoint.StoredEvent{RunID: ev.RunID, Seq: ev.Seq, ThreadID: ev.ThreadID, Time: ev.Time, Kind: string(ev.Type), Data: data}
}
