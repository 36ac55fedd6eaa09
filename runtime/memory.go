package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Memory is the in-process Checkpointer: threads live as long as the value.
// It is safe for concurrent use. Use it for tests and for single-process
// programs that need interrupts and resume but not durability.
type Memory struct {
	mu       sync.Mutex
	threads  map[string]*memThread
	journals map[string]map[string][]JournalEntry
	leases   map[string]*memLease // held leases, by thread id
	epochs   map[string]int64     // the last lease epoch of each thread
	docs     map[string][]byte    // graph documents by fingerprint (DocumentStore)
}

type memThread struct {
	cps []*Checkpoint // in creation order
}

// memLease is a lease Memory gave out. Once its thread is deleted it is
// lost: the run's writes under it are refused, and its release does nothing.
type memLease struct {
	m      *Memory
	thread string
	epoch  int64
	opts   LeaseOptions
	lost   error // set (under m.mu) when the thread was deleted
	once   sync.Once
}

func (l *memLease) Fence() string { return strconv.FormatInt(l.epoch, 10) }

// Deadline is zero: an in-process lease does not expire.
func (l *memLease) Deadline() time.Time { return time.Time{} }

func (l *memLease) Release() {
	l.once.Do(func() {
		l.m.mu.Lock()
		if l.m.leases[l.thread] == l {
			delete(l.m.leases, l.thread)
		}
		l.m.mu.Unlock()
	})
}

// fence refuses a run's write made under a lease of m that is no longer
// current (its thread was deleted); m.mu is held.
func (m *Memory) fence(ctx context.Context, threadID string) error {
	l, _ := LeaseFromContext(ctx).(*memLease)
	if l == nil || l.m != m || l.thread != threadID {
		return nil
	}
	if l.lost != nil {
		return fmt.Errorf("memory: write of thread %q refused: %w", threadID, l.lost)
	}
	return nil
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
func (m *Memory) Put(ctx context.Context, cp *Checkpoint, done []string) error {
	c := cloneCheckpoint(cp)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fence(ctx, cp.ThreadID); err != nil {
		return err
	}
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
func (m *Memory) PutJournal(ctx context.Context, threadID, taskID string, entries []JournalEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fence(ctx, threadID); err != nil {
		return err
	}
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

// DeleteThread forgets the thread. A run holding its lease is told through
// LeaseOptions.Lost (ErrThreadDeleted), and its later writes are refused.
func (m *Memory) DeleteThread(_ context.Context, threadID string) error {
	m.mu.Lock()
	delete(m.threads, threadID)
	delete(m.journals, threadID)
	delete(m.epochs, threadID)
	l := m.leases[threadID]
	delete(m.leases, threadID)
	var lost func(error)
	if l != nil {
		l.lost = ErrThreadDeleted
		lost = l.opts.Lost
	}
	m.mu.Unlock()
	if lost != nil {
		lost(ErrThreadDeleted)
	}
	return nil
}

// Lease marks the thread as running until the lease is released. The
// lease does not expire; it is lost only when the thread is deleted.
func (m *Memory) Lease(_ context.Context, threadID string, opts LeaseOptions) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases[threadID] != nil {
		return nil, fmt.Errorf("%w (thread %q, in this process)", ErrThreadBusy, threadID)
	}
	if m.leases == nil {
		m.leases, m.epochs = map[string]*memLease{}, map[string]int64{}
	}
	m.epochs[threadID]++
	l := &memLease{m: m, thread: threadID, epoch: m.epochs[threadID], opts: opts}
	m.leases[threadID] = l
	return l, nil
}

func cloneCheckpoint(c *Checkpoint) *Checkpoint {
	out := *c
	out.Next = slices.Clone(c.Next)
	out.Pending = slices.Clone(c.Pending)
	return &out
}
