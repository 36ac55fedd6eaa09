package runtime

import (
	"iter"
	"sync"
)

// Mode is a projection of the event stream into one of the views popular
// stream APIs offer. Projecting adds no information: it is a pure function
// of one event.
type Mode string

// The projection modes.
const (
	ModeValues   Mode = "values"   // the full state after each superstep (from state)
	ModeUpdates  Mode = "updates"  // {node: update} per finished task (from node_end)
	ModeCustom   Mode = "custom"   // every Emit payload (from custom)
	ModeMessages Mode = "messages" // only token payloads (from custom)
	ModeDebug    Mode = "debug"    // every event itself
)

// Part is one projected item. It keeps the Seq and NS of the event it came
// from, so reconnecting and grouping by subgraph still work after projecting.
type Part struct {
	Mode Mode     `json:"mode"`
	Seq  int64    `json:"seq"`
	NS   []string `json:"ns"`
	// Data is the view's value: the state (values), a one-entry map of node
	// id to update (updates), the payload (custom, messages) or the Event
	// (debug).
	Data any `json:"data"`
}

// Project returns the parts of ev for the given modes, in the order of modes.
func Project(ev Event, modes ...Mode) []Part {
	var out []Part
	for _, m := range modes {
		var data any
		switch {
		case m == ModeValues && ev.Type == EventState:
			data = ev.Channels
		case m == ModeUpdates && ev.Type == EventNodeEnd:
			data = map[string]any{ev.Node: ev.Update}
		case m == ModeCustom && ev.Type == EventCustom:
			data = ev.Payload
		case m == ModeMessages && ev.Type == EventCustom && IsToken(ev.Payload):
			data = ev.Payload
		case m == ModeDebug:
			data = ev
		default:
			continue
		}
		out = append(out, Part{Mode: m, Seq: ev.Seq, NS: ev.NS, Data: data})
	}
	return out
}

// IsToken reports whether a custom payload is a token: a Token, or a map
// whose "type" is "token" (a payload that went through JSON).
func IsToken(payload any) bool {
	switch p := payload.(type) {
	case Token:
		return p.Type == "token"
	case *Token:
		return p != nil && p.Type == "token"
	case map[string]any:
		return p["type"] == "token"
	}
	return false
}

// Projected streams the parts of every event of events for the given modes,
// so several modes can be consumed from one run at once.
func Projected(events iter.Seq2[Event, error], modes ...Mode) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		for ev, err := range events {
			if err != nil {
				yield(Part{}, err)
				return
			}
			for _, p := range Project(ev, modes...) {
				if !yield(p, nil) {
					return
				}
			}
		}
	}
}

// EventLog records the events of a run so a consumer that lost its
// connection can reconnect and continue after the last Seq it saw, without
// replaying the run. It is safe for concurrent use.
type EventLog struct {
	mu     sync.Mutex
	events []Event
}

// Record passes events through while appending each to the log.
func (l *EventLog) Record(events iter.Seq2[Event, error]) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for ev, err := range events {
			if err == nil {
				l.mu.Lock()
				l.events = append(l.events, ev)
				l.mu.Unlock()
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Since returns the recorded events whose Seq is greater than last, in order.
func (l *EventLog) Since(last int64) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, ev := range l.events {
		if ev.Seq > last {
			out = append(out, ev)
		}
	}
	return out
}
