package stream

import (
	"iter"

	"github.com/ilmek-go/ilmek/runtime"
)

// Root passes on the events of the root graph only, leaving out those of
// its subgraphs (an event whose NS is not empty), for a client that shows
// the parent's progress alone. Errors pass through.
func Root(events iter.Seq2[runtime.Event, error]) iter.Seq2[runtime.Event, error] {
	return func(yield func(runtime.Event, error) bool) {
		for ev, err := range events {
			if err == nil && len(ev.NS) > 0 {
				continue
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
