package server

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// threadRecord is what the server keeps of a thread besides its
// checkpoints: the graph it runs and its metadata.
type threadRecord struct {
	ID      string
	Graph   string
	Meta    map[string]string
	Created time.Time
}

// threadIndex keeps the server's threads for lookup and listing.
type threadIndex interface {
	createThread(ctx context.Context, t threadRecord) (created bool, err error)
	thread(ctx context.Context, id string) (threadRecord, error)
	// threads returns every thread, newest first (ties by id).
	threads(ctx context.Context) ([]threadRecord, error)
}

// memThreads is the in-memory thread index.
type memThreads struct {
	mu   sync.Mutex
	byID map[string]threadRecord
}

func newMemThreads() *memThreads { return &memThreads{byID: map[string]threadRecord{}} }

func (m *memThreads) createThread(_ context.Context, t threadRecord) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[t.ID]; ok {
		return false, nil
	}
	m.byID[t.ID] = t
	return true, nil
}

func (m *memThreads) thread(_ context.Context, id string) (threadRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.byID[id]
	if !ok {
		return threadRecord{}, runtime.ErrNotFound
	}
	return t, nil
}

func (m *memThreads) threads(context.Context) ([]threadRecord, error) {
	m.mu.Lock()
	out := make([]threadRecord, 0, len(m.byID))
	for _, t := range m.byID {
		out = append(out, t)
	}
	m.mu.Unlock()
	sortThreads(out)
	return out, nil
}

// sortThreads orders threads newest first, ties by id.
func sortThreads(out []threadRecord) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
}
