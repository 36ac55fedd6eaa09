package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Memory is the in-process Checkpointer: threads live as long as the value.
// It is safe for concurrent use. Use it for tests and for single-process
// programs that need interrupts and resume but not durability. It keeps a
// thread's checkpoints as entries the garbage collector does not scan,
// their ids and delta values copied into one byte arena per thread (at
// most 4 GiB: ErrMemoryFull), so a superstep's checkpoint costs little
// more than those copies.
type Memory struct {
	mu       sync.Mutex
	threads  map[string]*memThread
	journals map[string]map[string][]JournalEntry
	leases   map[string]*memLease // held leases, by thread id
	epochs   map[string]int64     // the last lease epoch of each thread
	docs     map[string][]byte    // graph documents by fingerprint (DocumentStore)
	compact  Compaction
	recs     map[string]*memRec      // thread records (ThreadRecorder), by thread id
	runs     map[string]*memRun      // event logs (EventStore), by run id
	scheds   map[string]*memSchedule // schedules (ScheduleStore), by name
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
	// t and rec are the thread's checkpoints and record once written
	// (under m.mu): a thread keeps them until it is deleted, and then the
	// lease is lost.
	t   *memThread
	rec *memRec
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

// check refuses a write of l that is no longer current (its thread was
// deleted); m.mu is held.
func (l *memLease) check() error {
	if l.lost != nil {
		return fmt.Errorf("memory: write of thread %q refused: %w", l.thread, l.lost)
	}
	return nil
}

// Commit stores c in one step under Memory's lock: nothing of it is
// visible until all of it is.
func (l *memLease) Commit(_ context.Context, c Commit) error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	if c.Checkpoint != nil && c.Checkpoint.ThreadID != l.thread {
		return fmt.Errorf("memory: commit of checkpoint %s of thread %q under the lease of thread %q refused", c.Checkpoint.ID, c.Checkpoint.ThreadID, l.thread)
	}
	if c.Checkpoint != nil {
		cp := c.Checkpoint
		t := l.t
		switch {
		case t != nil:
		case c.Delta == nil:
			t = m.thread(l.thread)
		default:
			if t = m.threads[l.thread]; t == nil {
				return fmt.Errorf("memory: put checkpoint %s of thread %q as a delta of checkpoint %s: %w", cp.ID, cp.ThreadID, c.Delta.Base, ErrNotFound)
			}
		}
		var err error
		if c.Delta != nil {
			err = m.putDelta(t, cp, *c.Delta)
		} else {
			err = m.put(t, cp)
		}
		if err != nil {
			return err
		}
		if l.t == nil {
			l.t, l.rec = t, m.rec(l.thread)
		}
		m.dropJournals(cp.ThreadID, c.Done)
		l.rec.touch(cp.Created)
	}
	if c.Thread != nil {
		m.rec(l.thread).apply(*c.Thread)
	}
	m.appendEvents(c.Events)
	return nil
}

// PutJournal replaces a task's journal with a copy of entries, fenced.
func (l *memLease) PutJournal(_ context.Context, taskID string, entries []JournalEntry) error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	m.putJournal(l.thread, taskID, entries)
	return nil
}

// NewMemory returns an empty in-memory checkpointer: one process's
// threads, gone when it exits.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{threads: map[string]*memThread{}, journals: map[string]map[string][]JournalEntry{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

var _ DeltaCheckpointer = (*Memory)(nil)

// MemoryOption configures a Memory checkpointer (NewMemory).
type MemoryOption func(*Memory)

// Compact sets how often PutDelta stores a full snapshot instead of a
// delta (zero fields: DefaultCompaction), as sqlite.Compact and
// postgres.Compact do for their stores.
func Compact(c Compaction) MemoryOption { return func(m *Memory) { m.compact = c } }

func (m *Memory) thread(id string) *memThread {
	t := m.threads[id]
	if t == nil {
		t = &memThread{id: id}
		m.threads[id] = t
	}
	return t
}

// Put stores a copy of cp and drops the journals of done, unleased.
func (m *Memory) Put(_ context.Context, cp *Checkpoint, done []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.put(m.thread(cp.ThreadID), cp); err != nil {
		return err
	}
	m.dropJournals(cp.ThreadID, done)
	m.touch(cp)
	return nil
}

// put stores a copy of cp in t, its thread; m.mu is held.
func (m *Memory) put(t *memThread, cp *Checkpoint) error {
	if _, err := t.add(cp, "", nil, cp.Channels); err != nil {
		return fmt.Errorf("memory: put checkpoint %s: %w", cp.ID, err)
	}
	return nil
}

// PutDelta stores a copy of cp as d, or as a full snapshot when the chain
// of deltas since the last one reaches the Compaction limits; unleased.
func (m *Memory) PutDelta(_ context.Context, cp *Checkpoint, d Delta, done []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[cp.ThreadID]
	if t == nil {
		return fmt.Errorf("memory: put checkpoint %s of thread %q as a delta of checkpoint %s: %w", cp.ID, cp.ThreadID, d.Base, ErrNotFound)
	}
	if err := m.putDelta(t, cp, d); err != nil {
		return err
	}
	m.dropJournals(cp.ThreadID, done)
	m.touch(cp)
	return nil
}

// putDelta stores cp as d in t, its thread; m.mu is held.
func (m *Memory) putDelta(t *memThread, cp *Checkpoint, d Delta) error {
	i, ok := t.index(d.Base)
	if !ok {
		return fmt.Errorf("memory: put checkpoint %s of thread %q as a delta of checkpoint %s: %w", cp.ID, cp.ThreadID, d.Base, ErrNotFound)
	}
	base, size := t.at(i), d.Size()
	snap := int(base.snap)
	if t.snapshot(base) {
		snap = len(t.extra(base).channels)
	}
	if m.compact.Snapshot(int(base.depth), int(base.bytes), size, snap) {
		chans, err := m.channels(t, i, d.Writes)
		if err != nil {
			return fmt.Errorf("memory: compact checkpoint %s of thread %q: %w", cp.ID, cp.ThreadID, err)
		}
		if _, err := t.add(cp, "", nil, chans); err != nil {
			return fmt.Errorf("memory: put checkpoint %s: %w", cp.ID, err)
		}
		return nil
	}
	depth, bytes := base.depth+1, int(base.bytes)+size
	e, err := t.add(cp, d.Base, d.Writes, nil)
	if err != nil {
		return fmt.Errorf("memory: put checkpoint %s: %w", cp.ID, err)
	}
	e.depth, e.bytes, e.snap = depth, sat32(bytes), sat32(snap)
	return nil
}

// dropJournals drops the journals of the tasks done of thread; m.mu is
// held.
func (m *Memory) dropJournals(thread string, done []string) {
	if len(done) == 0 {
		return
	}
	if js := m.journals[thread]; js != nil {
		for _, id := range done {
			delete(js, id)
		}
	}
}

// channels reconstructs the channels of entry i of t with more writes
// applied after it; m.mu is held.
func (m *Memory) channels(t *memThread, i int, more []ChannelWrite) (json.RawMessage, error) {
	// The deltas of one write (a chain's usual) share one array, ones, not
	// a slice each; it and chain are sized by the depth of entry i (the
	// deltas to walk), and ones is never grown, so its slices stay put.
	var chain [][]ChannelWrite
	var ones []ChannelWrite
	if e := t.at(i); !t.snapshot(e) {
		chain, ones = make([][]ChannelWrite, 0, int(e.depth)+1), make([]ChannelWrite, 0, int(e.depth))
	}
	if more != nil {
		chain = append(chain, more)
	}
	for {
		e := t.at(i)
		if t.snapshot(e) {
			chans := t.extra(e).channels
			if len(chain) == 0 {
				return chans, nil
			}
			slices.Reverse(chain)
			return ApplyDeltas(chans, chain...)
		}
		if e.nwrites == 1 && len(ones) < cap(ones) {
			ones = append(ones, t.write(e.write1))
			chain = append(chain, ones[len(ones)-1:len(ones):len(ones)])
		} else {
			chain = append(chain, t.writesOf(e))
		}
		j, ok := t.baseOf(e)
		if !ok {
			return nil, fmt.Errorf("%w: checkpoint %s is a delta of checkpoint %s, which is gone", ErrDelta, t.idOf(e), t.baseID(e))
		}
		i = j
	}
}

// full returns a copy of entry i of t with its channels; m.mu is held.
func (m *Memory) full(t *memThread, i int) (*Checkpoint, error) {
	c := t.checkpoint(t.at(i))
	chans, err := m.channels(t, i, nil)
	if err != nil {
		return nil, fmt.Errorf("memory: read checkpoint %s of thread %q: %w", c.ID, c.ThreadID, err)
	}
	c.Channels = chans
	return c, nil
}

var _ Pruner = (*Memory)(nil)

// Prune drops the thread's checkpoints that opts and the rules of Pruner
// do not keep.
func (m *Memory) Prune(_ context.Context, threadID string, opts PruneOptions) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil {
		return 0, nil
	}
	entries := make([]PruneEntry, t.n)
	for i := range entries {
		e := t.at(i)
		entries[i] = PruneEntry{ID: t.idOf(e), ParentID: t.str(e.parent), PlanID: t.planID(e), Created: t.created(e)}
	}
	keep, err := PruneKeep(entries, opts)
	if err != nil {
		return 0, fmt.Errorf("memory: prune thread %q: %w", threadID, err)
	}
	kept := &memThread{id: threadID}
	for i := range entries {
		if !keep[entries[i].ID] {
			continue
		}
		e := t.at(i)
		c := t.checkpoint(e)
		if t.snapshot(e) || !keep[t.baseID(e)] {
			// A snapshot, or a delta whose base goes: it becomes one.
			chans, err := m.channels(t, i, nil)
			if err != nil {
				return 0, fmt.Errorf("memory: prune thread %q: %w", threadID, err)
			}
			if _, err := kept.add(c, "", nil, chans); err != nil {
				return 0, fmt.Errorf("memory: prune thread %q: %w", threadID, err)
			}
			continue
		}
		ws := t.writesOf(e)
		j, _ := kept.index(t.baseID(e))
		b := kept.at(j)
		snap := int(b.snap)
		if kept.snapshot(b) {
			snap = len(kept.extra(b).channels)
		}
		depth, bytes := b.depth+1, int(b.bytes)+Delta{Writes: ws}.Size()
		n, err := kept.add(c, t.baseID(e), ws, nil)
		if err != nil {
			return 0, fmt.Errorf("memory: prune thread %q: %w", threadID, err)
		}
		n.depth, n.bytes, n.snap = depth, sat32(bytes), sat32(snap)
	}
	removed := t.n - kept.n
	// In place: a lease of the thread holds t.
	*t = *kept
	if t.n > 0 {
		oldest := t.created(t.at(0))
		for i := range t.n {
			if c := t.created(t.at(i)); c.Before(oldest) {
				oldest = c
			}
		}
		m.dropEvents(threadID, oldest)
	}
	return removed, nil
}

// Get returns a copy of the checkpoint id, or of the latest one when id is "".
func (m *Memory) Get(_ context.Context, threadID, id string) (*Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil || t.n == 0 {
		return nil, ErrNotFound
	}
	if id == "" {
		return m.full(t, t.latest())
	}
	if i, ok := t.index(id); ok {
		return m.full(t, i)
	}
	return nil, ErrNotFound
}

var _ LatestReader = (*Memory)(nil)

// GetLatest returns the thread's latest checkpoint, without its channels
// when its ID is known (LatestReader).
func (m *Memory) GetLatest(_ context.Context, threadID, known string) (*Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil || t.n == 0 {
		return nil, ErrNotFound
	}
	if e := t.at(t.latest()); known != "" && t.idOf(e) == known {
		return t.checkpoint(e), nil
	}
	return m.full(t, t.latest())
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
	for i := t.latest(); i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		c, err := m.full(t, i)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// PutJournal replaces a task's journal with a copy of entries, unleased.
func (m *Memory) PutJournal(_ context.Context, threadID, taskID string, entries []JournalEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putJournal(threadID, taskID, entries)
	return nil
}

// putJournal stores a copy of entries; m.mu is held.
func (m *Memory) putJournal(threadID, taskID string, entries []JournalEntry) {
	js := m.journals[threadID]
	if js == nil {
		js = map[string][]JournalEntry{}
		m.journals[threadID] = js
	}
	js[taskID] = slices.Clone(entries)
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
	delete(m.recs, threadID)
	m.dropEvents(threadID, time.Time{})
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
