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
// programs that need interrupts and resume but not durability.
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

type memThread struct {
	cps  []*memCP       // in creation order
	byID map[string]int // index in cps of the first indexed entries
	// indexed is how many of cps byID holds: it catches up on a lookup
	// that is not of the latest entry (index), so a run that writes each
	// checkpoint as a delta of the one before pays no map insertion.
	indexed int
	// slab and bytes are room for the next entries and their delta
	// values, allocated a chunk at a time (growing with the thread, up to
	// slabMax entries and bytesMax bytes): a superstep's checkpoint then
	// costs no allocation of its own most of the time.
	slab  []memCP
	bytes []byte
}

// Chunk limits of memThread's slab and bytes: an entry kept by Prune pins
// at most its chunk.
const (
	slabMax  = 32
	bytesMax = 4 << 10
)

// index returns the index in t.cps of the checkpoint id.
func (t *memThread) index(id string) (int, bool) {
	if n := len(t.cps); n > 0 && t.cps[n-1].cp.ID == id {
		return n - 1, true
	}
	for ; t.indexed < len(t.cps); t.indexed++ {
		t.byID[t.cps[t.indexed].cp.ID] = t.indexed
	}
	i, ok := t.byID[id]
	return i, ok
}

// entry returns room for a new entry of t.
func (t *memThread) entry() *memCP {
	if len(t.slab) == 0 {
		t.slab = make([]memCP, min(len(t.cps)+1, slabMax))
	}
	e := &t.slab[0]
	t.slab = t.slab[1:]
	return e
}

// cloneWrites returns copies of ws, their values in t's byte chunks.
func (t *memThread) cloneWrites(dst []ChannelWrite, ws []ChannelWrite) []ChannelWrite {
	n := 0
	for _, w := range ws {
		n += len(w.Value)
	}
	if n > bytesMax/4 {
		return cloneWritesInto(dst, ws)
	}
	if cap(t.bytes)-len(t.bytes) < n {
		t.bytes = make([]byte, 0, min(max(4*len(t.cps), 64), bytesMax))
	}
	for _, w := range ws {
		at := len(t.bytes)
		t.bytes = append(t.bytes, w.Value...)
		w.Value = t.bytes[at:len(t.bytes):len(t.bytes)]
		dst = append(dst, w)
	}
	return dst
}

// memCP is a stored checkpoint: a full snapshot (base "", cp.Channels
// set), or the delta of checkpoint base (cp.Channels nil).
type memCP struct {
	cp     *Checkpoint
	own    Checkpoint // what cp points to when the entry was made by newMemCP
	next1  [1]TaskRef // own.Next, when it has one task
	write1 [1]ChannelWrite
	base   string
	writes []ChannelWrite
	depth  int // deltas since the snapshot, this one included
	bytes  int // delta bytes since the snapshot, this one included
	snap   int // bytes of the snapshot the chain starts at
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
		var err error
		if c.Delta != nil {
			err = m.putDelta(c.Checkpoint, *c.Delta, c.Done)
		} else {
			m.put(c.Checkpoint, c.Done)
		}
		if err != nil {
			return err
		}
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
		t = &memThread{byID: map[string]int{}}
		m.threads[id] = t
	}
	return t
}

// Put stores a copy of cp and drops the journals of done, unleased.
func (m *Memory) Put(_ context.Context, cp *Checkpoint, done []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(cp, done)
	return nil
}

// put stores a copy of cp; m.mu is held.
func (m *Memory) put(cp *Checkpoint, done []string) {
	c := cloneCheckpoint(cp)
	m.add(&memCP{cp: c}, done)
	m.touch(c)
}

// PutDelta stores a copy of cp as d, or as a full snapshot when the chain
// of deltas since the last one reaches the Compaction limits; unleased.
func (m *Memory) PutDelta(_ context.Context, cp *Checkpoint, d Delta, done []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.putDelta(cp, d, done)
}

// putDelta is PutDelta with m.mu held.
func (m *Memory) putDelta(cp *Checkpoint, d Delta, done []string) error {
	t := m.threads[cp.ThreadID]
	i, ok := 0, false
	if t != nil {
		i, ok = t.index(d.Base)
	}
	if !ok {
		return fmt.Errorf("memory: put checkpoint %s of thread %q as a delta of checkpoint %s: %w", cp.ID, cp.ThreadID, d.Base, ErrNotFound)
	}
	base, size := t.cps[i], d.Size()
	snap := base.snap
	if base.base == "" {
		snap = len(base.cp.Channels)
	}
	e := newMemCP(t.entry(), cp)
	e.base, e.depth, e.bytes, e.snap = d.Base, base.depth+1, base.bytes+size, snap
	e.writes = t.cloneWrites(e.write1[:0], d.Writes)
	if m.compact.Snapshot(base.depth, base.bytes, size, snap) {
		chans, err := m.channels(t, i, e.writes)
		if err != nil {
			return fmt.Errorf("memory: compact checkpoint %s of thread %q: %w", cp.ID, cp.ThreadID, err)
		}
		e.base, e.writes, e.depth, e.bytes, e.snap = "", nil, 0, 0, 0
		e.cp.Channels = chans
	}
	m.add(e, done)
	m.touch(e.cp)
	return nil
}

// newMemCP makes e an entry holding a copy of cp without its channels:
// the entry, the checkpoint and a one-task plan in one place.
func newMemCP(e *memCP, cp *Checkpoint) *memCP {
	e.own = *cp
	e.cp = &e.own
	e.own.Channels = nil
	switch len(cp.Next) {
	case 0:
		e.own.Next = nil
	case 1:
		e.next1[0] = cp.Next[0]
		e.own.Next = e.next1[:]
	default:
		e.own.Next = slices.Clone(cp.Next)
	}
	e.own.Pending = slices.Clone(cp.Pending)
	return e
}

// add appends e to its thread and drops the journals of done; m.mu is held.
func (m *Memory) add(e *memCP, done []string) {
	t := m.thread(e.cp.ThreadID)
	t.cps = append(t.cps, e)
	if js := m.journals[e.cp.ThreadID]; js != nil {
		for _, id := range done {
			delete(js, id)
		}
	}
}

// channels reconstructs the channels of t.cps[i] with more writes applied
// after it; m.mu is held.
func (m *Memory) channels(t *memThread, i int, more []ChannelWrite) (json.RawMessage, error) {
	var chain [][]ChannelWrite
	if more != nil {
		chain = append(chain, more)
	}
	for {
		e := t.cps[i]
		if e.base == "" {
			if len(chain) == 0 {
				return e.cp.Channels, nil
			}
			slices.Reverse(chain)
			return ApplyDeltas(e.cp.Channels, chain...)
		}
		chain = append(chain, e.writes)
		j, ok := t.index(e.base)
		if !ok {
			return nil, fmt.Errorf("%w: checkpoint %s is a delta of checkpoint %s, which is gone", ErrDelta, e.cp.ID, e.base)
		}
		i = j
	}
}

// full returns a copy of t.cps[i] with its channels; m.mu is held.
func (m *Memory) full(t *memThread, i int) (*Checkpoint, error) {
	c := cloneCheckpoint(t.cps[i].cp)
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
	entries := make([]PruneEntry, len(t.cps))
	for i, e := range t.cps {
		entries[i] = PruneEntry{ID: e.cp.ID, ParentID: e.cp.ParentID, PlanID: e.cp.PlanID, Created: e.cp.Created}
	}
	keep, err := PruneKeep(entries, opts)
	if err != nil {
		return 0, fmt.Errorf("memory: prune thread %q: %w", threadID, err)
	}
	kept := &memThread{byID: map[string]int{}}
	for i, e := range t.cps {
		if !keep[e.cp.ID] {
			continue
		}
		n := &memCP{cp: e.cp, base: e.base, writes: e.writes}
		if e.base != "" && !keep[e.base] {
			// Its base goes: it becomes a snapshot.
			chans, err := m.channels(t, i, nil)
			if err != nil {
				return 0, fmt.Errorf("memory: prune thread %q: %w", threadID, err)
			}
			c := cloneCheckpoint(e.cp)
			c.Channels = chans
			n = &memCP{cp: c}
		}
		if n.base != "" {
			b := kept.cps[kept.byID[n.base]]
			n.depth, n.bytes, n.snap = b.depth+1, b.bytes+Delta{Writes: n.writes}.Size(), b.snap
			if b.base == "" {
				n.snap = len(b.cp.Channels)
			}
		}
		kept.byID[n.cp.ID] = len(kept.cps)
		kept.cps = append(kept.cps, n)
	}
	kept.indexed = len(kept.cps)
	removed := len(t.cps) - len(kept.cps)
	m.threads[threadID] = kept
	if len(kept.cps) > 0 {
		oldest := kept.cps[0].cp.Created
		for _, e := range kept.cps {
			if e.cp.Created.Before(oldest) {
				oldest = e.cp.Created
			}
		}
		m.dropEvents(threadID, oldest)
	}
	return removed, nil
}

// cloneWritesInto appends copies of ws to dst, their values in one
// allocation.
func cloneWritesInto(dst []ChannelWrite, ws []ChannelWrite) []ChannelWrite {
	n := 0
	for _, w := range ws {
		n += len(w.Value)
	}
	buf := make([]byte, 0, n)
	for _, w := range ws {
		at := len(buf)
		buf = append(buf, w.Value...)
		w.Value = buf[at:len(buf):len(buf)]
		dst = append(dst, w)
	}
	return dst
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
		return m.full(t, len(t.cps)-1)
	}
	if i, ok := t.index(id); ok {
		return m.full(t, i)
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

func cloneCheckpoint(c *Checkpoint) *Checkpoint {
	out := *c
	out.Next = slices.Clone(c.Next)
	out.Pending = slices.Clone(c.Pending)
	return &out
}
