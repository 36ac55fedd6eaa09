package runtime

import (
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

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
