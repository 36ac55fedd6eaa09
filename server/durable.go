package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Metadata keys the server keeps with every thread besides the caller's:
// the graph it runs, when it was created, its id (to find one thread in a
// listing) and its owner ("owner", see Config.Access). A request may not
// set them.
const (
	metaGraph   = "ilmek.graph"
	metaCreated = "ilmek.created"
	metaID      = "ilmek.thread"
	metaOwner   = "owner"
)

// reservedMeta reports whether a metadata key is the server's.
func reservedMeta(k string) bool {
	return k == metaGraph || k == metaCreated || k == metaID || k == metaOwner
}

// bindStore uses the checkpointer's durable parts when it has them: its
// event log (checkpoint.EventStore) for the runs' events, and its thread
// records (checkpoint.ThreadLister and checkpoint.ThreadRecorder) for the thread
// index, so that threads and event logs outlive the process and another
// server process on the same store serves them too.
func (s *Server) bindStore(cp runtime.Checkpointer) {
	if es, ok := cp.(checkpoint.EventStore); ok {
		s.durable = runtimeEvents{es}
	}
	lister, lok := cp.(checkpoint.ThreadLister)
	rec, rok := cp.(checkpoint.ThreadRecorder)
	if lok && rok {
		s.index = &storedThreads{lister: lister, rec: rec, cache: map[string]threadRecord{}}
	}
}

// runtimeEvents is the eventStore of a checkpoint.EventStore.
type runtimeEvents struct{ es checkpoint.EventStore }

func (r runtimeEvents) AppendEvents(ctx context.Context, evs []storedEvent) error {
	out := make([]checkpoint.StoredEvent, len(evs))
	for i, e := range evs {
		out[i] = checkpoint.StoredEvent{RunID: e.RunID, Seq: e.Seq, ThreadID: e.ThreadID, Time: e.Time, Kind: e.Kind, Data: e.Data}
	}
	return r.es.AppendEvents(ctx, out)
}

func (r runtimeEvents) ReadEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]storedEvent, error) {
	evs, err := r.es.ReadEvents(ctx, runID, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	out := make([]storedEvent, len(evs))
	for i, e := range evs {
		out[i] = storedEvent{RunID: e.RunID, Seq: e.Seq, ThreadID: e.ThreadID, Time: e.Time, Kind: e.Kind, Data: e.Data}
	}
	return out, nil
}

// storedThreads is the thread index kept in the checkpointer's thread
// records: the metadata keys above hold the graph, creation time and id.
type storedThreads struct {
	lister checkpoint.ThreadLister
	rec    checkpoint.ThreadRecorder
	mu     sync.Mutex
	cache  map[string]threadRecord
}

func (st *storedThreads) createThread(ctx context.Context, t threadRecord) (bool, error) {
	if _, err := st.thread(ctx, t.ID); err == nil {
		return false, nil
	} else if !errors.Is(err, runtime.ErrNotFound) {
		return false, err
	}
	meta := make(map[string]string, len(t.Meta)+3)
	for k, v := range t.Meta {
		meta[k] = v
	}
	meta[metaGraph], meta[metaCreated], meta[metaID] = t.Graph, t.Created.UTC().Format(time.RFC3339Nano), t.ID
	if err := st.rec.RecordThread(ctx, t.ID, checkpoint.ThreadWrite{Meta: meta}); err != nil {
		return false, err
	}
	st.mu.Lock()
	st.cache[t.ID] = t
	st.mu.Unlock()
	return true, nil
}

// record turns a stored thread into the server's record; ok is false for
// a thread the server did not create (no graph recorded).
func record(info checkpoint.ThreadInfo) (threadRecord, bool) {
	g := info.Meta[metaGraph]
	if g == "" {
		return threadRecord{}, false
	}
	created, _ := time.Parse(time.RFC3339Nano, info.Meta[metaCreated])
	meta := make(map[string]string, len(info.Meta))
	for k, v := range info.Meta {
		if k != metaGraph && k != metaCreated && k != metaID {
			meta[k] = v
		}
	}
	return threadRecord{ID: info.ID, Graph: g, Meta: meta, Created: created}, true
}

func (st *storedThreads) thread(ctx context.Context, id string) (threadRecord, error) {
	st.mu.Lock()
	t, ok := st.cache[id]
	st.mu.Unlock()
	if ok {
		return t, nil
	}
	page, err := st.lister.ListThreads(ctx, checkpoint.ThreadQuery{Meta: map[string]string{metaID: id}, Limit: 2})
	if err != nil {
		return threadRecord{}, err
	}
	for _, info := range page.Threads {
		if t, ok := record(info); ok && t.ID == id {
			st.mu.Lock()
			st.cache[id] = t
			st.mu.Unlock()
			return t, nil
		}
	}
	return threadRecord{}, runtime.ErrNotFound
}

// threads lists every thread the server created, newest first.
func (st *storedThreads) threads(ctx context.Context) ([]threadRecord, error) {
	var out []threadRecord
	q := checkpoint.ThreadQuery{Limit: checkpoint.MaxThreadLimit}
	for {
		page, err := st.lister.ListThreads(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, info := range page.Threads {
			if t, ok := record(info); ok {
				out = append(out, t)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	sortThreads(out)
	return out, nil
}
