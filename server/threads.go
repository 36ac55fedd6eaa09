package server

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Metadata keys the server keeps with every thread besides the caller's:
// the graph it runs, when it was created, its id and its owner ("owner",
// see Config.Access). A request may not set them. The server reads one
// thread's record by its key (ThreadQuery.ID); the id in the metadata is
// what servers before that change looked a thread up by, kept for them.
const (
	metaGraph   = "ilmek.graph"
	metaCreated = "ilmek.created"
	metaID      = "ilmek.thread"
	metaOwner   = "owner"
	// metaRuns lists the thread's latest runs, "<run id>:<kind>" separated
	// by spaces, oldest first (at most maxRunsKept), for GET .../runs.
	metaRuns = "ilmek.runs"
)

// maxRunsKept bounds the runs a thread's record lists.
const maxRunsKept = 50

// reservedMeta reports whether a metadata key is the server's.
func reservedMeta(k string) bool {
	return k == metaGraph || k == metaCreated || k == metaID || k == metaOwner || k == metaRuns
}

// threadRecord is a thread as the server reads it from the store's thread
// record: the graph it runs, its metadata (without the server's keys but
// "owner") and when it was created.
type threadRecord struct {
	ID      string
	Graph   string
	Meta    map[string]string
	Created time.Time
}

// threadStore is what the server needs of a store's thread records.
type threadStore interface {
	checkpoint.ThreadLister
	checkpoint.ThreadRecorder
}

// bindStore uses the checkpointer's thread records (checkpoint.ThreadLister
// and checkpoint.ThreadRecorder) and event log (checkpoint.EventStore) when it
// has them, so that threads and event logs outlive the process and another
// server process on the same store serves them too. A checkpointer
// without thread records gets memRecords.
func (s *Server) bindStore(cp runtime.Checkpointer) {
	if es, ok := cp.(checkpoint.EventStore); ok {
		s.events = es
	}
	if ts, ok := cp.(threadStore); ok {
		s.records = ts
	} else {
		s.records = memRecords{checkpoint.NewMemory()}
	}
}

// memRecords keeps the thread records of a checkpointer that keeps none,
// in memory, for as long as the server lives. It knows no run's outcome
// (the runs write to the checkpointer), so a listing by status is left to
// the server, which reads each thread's state.
type memRecords struct{ m *checkpoint.Memory }

func (r memRecords) ListThreads(ctx context.Context, q runtime.ThreadQuery) (runtime.ThreadPage, error) {
	q.Status = ""
	return r.m.ListThreads(ctx, q)
}

func (r memRecords) RecordThread(ctx context.Context, id string, w checkpoint.ThreadWrite) error {
	return r.m.RecordThread(ctx, id, w)
}

// recordThread records a new thread t; created is false when a thread of that id has a
// record already.
func (s *Server) recordThread(ctx context.Context, t threadRecord) (created bool, err error) {
	if _, err := s.lookup(ctx, t.ID); err == nil {
		return false, nil
	} else if !errors.Is(err, runtime.ErrNotFound) {
		return false, err
	}
	meta := maps.Clone(t.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[metaGraph], meta[metaCreated], meta[metaID] = t.Graph, t.Created.UTC().Format(time.RFC3339Nano), t.ID
	if err := s.records.RecordThread(ctx, t.ID, checkpoint.ThreadWrite{Meta: meta}); err != nil {
		return false, err
	}
	s.cache.Store(t.ID, t)
	return true, nil
}

// record turns a stored thread into the server's record; ok is false for
// a thread the server did not create (no graph recorded).
func record(info runtime.ThreadInfo) (threadRecord, bool) {
	g := info.Meta[metaGraph]
	if g == "" {
		return threadRecord{}, false
	}
	created, _ := time.Parse(time.RFC3339Nano, info.Meta[metaCreated])
	meta := make(map[string]string, len(info.Meta))
	for k, v := range info.Meta {
		if k != metaGraph && k != metaCreated && k != metaID && k != metaRuns {
			meta[k] = v
		}
	}
	return threadRecord{ID: info.ID, Graph: g, Meta: meta, Created: created}, true
}

// lookup finds the server's record of thread id (runtime.ErrNotFound when
// there is none).
func (s *Server) lookup(ctx context.Context, id string) (threadRecord, error) {
	if t, ok := s.cache.Load(id); ok {
		return t.(threadRecord), nil
	}
	page, err := s.records.ListThreads(ctx, runtime.ThreadQuery{ID: id, Limit: 1})
	if err != nil {
		return threadRecord{}, err
	}
	for _, info := range page.Threads {
		if t, ok := record(info); ok && t.ID == id {
			s.cache.Store(id, t)
			return t, nil
		}
	}
	return threadRecord{}, runtime.ErrNotFound
}
