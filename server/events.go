package server

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// storedEvent is one event of a run as the event log keeps it: the
// runtime's event encoded, under the server's run id.
type storedEvent struct {
	RunID    string
	Seq      int64
	ThreadID string
	Time     time.Time
	Kind     string
	Data     json.RawMessage
}

// eventStore is the per-run event log SSE reconnects read from. The
// server keeps its own runs' events in it under the server's run ids.
type eventStore interface {
	AppendEvents(ctx context.Context, evs []storedEvent) error
	// ReadEvents returns at most limit events of run with Seq > afterSeq,
	// in order.
	ReadEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]storedEvent, error)
}

// memEvents is the bounded in-memory event log used when the checkpointer
// has no durable one: at most perRun events per run (the oldest go first,
// except run_end, which is always kept) and the latest runs runs.
type memEvents struct {
	mu     sync.Mutex
	perRun int
	runs   int
	order  []string
	byRun  map[string][]storedEvent
}

func newMemEvents(perRun, runs int) *memEvents {
	return &memEvents{perRun: perRun, runs: runs, byRun: map[string][]storedEvent{}}
}

func (m *memEvents) AppendEvents(_ context.Context, evs []storedEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range evs {
		list, ok := m.byRun[ev.RunID]
		if !ok {
			m.order = append(m.order, ev.RunID)
			for len(m.order) > m.runs {
				delete(m.byRun, m.order[0])
				m.order = m.order[1:]
			}
		}
		list = append(list, ev)
		if len(list) > m.perRun {
			list = append(list[:0:0], list[len(list)-m.perRun:]...)
		}
		m.byRun[ev.RunID] = list
	}
	return nil
}

func (m *memEvents) ReadEvents(_ context.Context, runID string, afterSeq int64, limit int) ([]storedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []storedEvent
	for _, ev := range m.byRun[runID] {
		if ev.Seq > afterSeq {
			out = append(out, ev)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}
