// Package stream projects the events of a run into the views that popular
// streaming APIs offer: the state after each superstep, each node's update,
// the nodes' custom payloads, their tokens, or every event as it is.
//
// A projection adds no information: it is a pure function of one event, so
// a projected part keeps the Seq and NS of its event, and a client that
// reconnects after the last Seq it saw (checkpoint.EventStore.ReadEvents)
// projects what it reads the same way.
//
//	for p, err := range stream.Projected(g.Stream(ctx, in), stream.ModeUpdates, stream.ModeMessages) {
//		if err != nil {
//			return err
//		}
//		send(p.Mode, p.Data)
//	}
package stream

import (
	"iter"

	"github.com/ilmek-go/ilmek/runtime"
)

// Mode is one view of the event stream.
type Mode string

// The projection modes.
const (
	ModeValues   Mode = "values"   // the full state after each superstep (from state)
	ModeUpdates  Mode = "updates"  // {node: update} per finished task (from node_end)
	ModeCustom   Mode = "custom"   // every Ctx.Emit payload (from custom)
	ModeMessages Mode = "messages" // only token payloads, Ctx.EmitToken's (from custom)
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

// Project returns the parts of ev for the given modes, in the order of
// modes: none for a mode that has no view of ev's type.
func Project(ev runtime.Event, modes ...Mode) []Part {
	var out []Part
	for _, m := range modes {
		var data any
		switch {
		case m == ModeValues && ev.Type == runtime.EventState:
			data = ev.Channels
		case m == ModeUpdates && ev.Type == runtime.EventNodeEnd:
			data = map[string]any{ev.Node: ev.Update}
		case m == ModeCustom && ev.Type == runtime.EventCustom:
			data = ev.Payload
		case m == ModeMessages && ev.Type == runtime.EventCustom && isToken(ev.Payload):
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

// isToken reports whether a custom payload is a token: a runtime.Token, or
// a map whose "type" is "token" (a payload that went through JSON, such as
// an event read back from an EventStore).
func isToken(payload any) bool {
	switch p := payload.(type) {
	case runtime.Token:
		return p.Type == "token"
	case *runtime.Token:
		return p != nil && p.Type == "token"
	case map[string]any:
		return p["type"] == "token"
	}
	return false
}

// Projected streams the parts of every event of events (Graph.Stream,
// StreamResume) for the given modes, so several views of one run are read
// at once. An error of events ends the stream after it is yielded; stopping
// the iteration stops events, and with it the run.
func Projected(events iter.Seq2[runtime.Event, error], modes ...Mode) iter.Seq2[Part, error] {
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
