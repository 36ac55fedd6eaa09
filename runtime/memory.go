package runtime

import (
	"context"
	"slices"
	"sync"
)

// Memory is the in-process Checkpointer: threads live as long as the value.
// It is safe for concurrent use. Use it for tests and for single-process
// programs that need interrupts and resume but not durability.
type Memory struct {
	mu       sync.Mutex
	threads  map[string]*memThread
	journals map[string]map[string][]JournalEntry
}

type memThread struct {
	cps    []*Checkpoint // in creation order
	leased bool
}

// NewMemory returns an empty in-memory checkpointer.
func NewMemory() *Memory {
	return &Memory{threads: map[string]*memThread{}, journals: map[string]map[string][]JournalEntry{}}
}

var _ Checkpointer = (*Memory)(nil)

func (m *Memory) thread(id string) *memThread {
	t := m.threads[id]
	if t == nil {
		t = &memThread{}
		m.threads[id] = t
	}
	return t
}

// Put stores a copy of cp and drops the journals of done.
func (m *Memory) Put(_ context.Context, cp *Checkpoint, done []string) error {
	c := cloneCheckpoint(cp)
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.thread(cp.ThreadID)
	t.cps = append(t.cps, c)
	if js := m.journals[cp.ThreadID]; js != nil {
		for _, id := range done {
			delete(js, id)
		}
	}
	return nil
}

// Get returns a copy of the checkpoint id, or of the latest one when id is "".
func (m *Memory) Get(_ context.Context, threadID, id string) (*Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil || len(t.cps) == 0 {
		return nil, ErrNotFound
	}
	if id == "" {
		return cloneCheckpoint(t.cps[len(t.cps)-1]), nil
	}
	for _, c := range t.cps {
		if c.ID == id {
			return cloneCheckpoint(c), nil
		}
	}
	return nil, ErrNotFound
}

// List returns copies of the thread's checkpoints, newest first.
func (m *Memory) List(_ context.Context, threadID string, limit int) ([]*Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil {
		return nil, nil
	}
	var out []*Checkpoint
	for i := len(t.cps) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, cloneCheckpoint(t.cps[i]))
	}
	return out, nil
}

// PutJournal replaces a task's journal with a copy of entries.
func (m *Memory) PutJournal(_ context.Context, threadID, taskID string, entries []JournalEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	js := m.journals[threadID]
	if js == nil {
		js = map[string][]JournalEntry{}
		m.journals[threadID] = js
	}
	js[taskID] = slices.Clone(entries)
	return nil
}

// GetJournal returns a copy of a task's journal.
func (m *Memory) GetJournal(_ context.Context, threadID, taskID string) ([]JournalEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.journals[threadID][taskID]), nil
}

// DeleteThread forgets the thread.
func (m *Memory) DeleteThread(_ context.Context, threadID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, threadID)
	delete(m.journals, threadID)
	return nil
}

// Lease marks the thread as running until release is called.
func (m *Memory) Lease(_ context.Context, threadID string) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.thread(threadID)
	if t.leased {
		return nil, ErrThreadBusy
	}
	t.leased = true
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			t.leased = false
			m.mu.Unlock()
		})
	}, nil
}

func cloneCheckpoint(c *Checkpoint) *Checkpoint {
	out := *c
	out.Next = slices.Clone(c.Next)
	out.Pending = slices.Clone(c.Pending)
	return &out
}
