package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"
	"unsafe"

	"github.com/ilmek-go/ilmek/runtime/internal/hexid"
)

// How Memory keeps a thread's checkpoints: as entries without pointers
// (memCP), whose strings and delta values are spans of the thread's byte
// arena, and whose ids are references to entries or, for the executor's
// ids, the entry's time stamp and a counter (idOwn, idRef). A superstep's
// checkpoint then costs a copy of its writes into the arena and an entry
// in a block, and nothing the garbage collector scans. What a checkpoint
// rarely has (a snapshot's channels, interrupts, a send's input, a
// journal, a time stamp that is not plain UTC, a plan made before it, a
// delta of another checkpoint than its parent) goes to the thread's
// extras, referred to by index.

// memThread is one thread's checkpoints.
type memThread struct {
	id      string
	lastID  string     // the id of the latest entry, as its writer spelled it
	n       int        // entries
	blocks  [][]memCP  // entry i is at(i); see blockOf
	arena   []byte     // the bytes spans refer to; written once, only appended to
	tasks   []memTask  // tasks of entries that plan more than one
	writes  []memWrite // writes of entries that write more than one channel
	extras  []memExtra // extras of entries (memCP.extra - 1)
	headers []memHeader
	byID    map[string]int // index of the first indexed entries
	// indexed is how many entries byID holds: it catches up on a lookup
	// that is not of the latest entry (index), so a run that writes each
	// checkpoint as a delta of the one before pays no map insertion.
	indexed int
}

// span is a string or a value in a thread's arena: n bytes at off. The
// span of a checkpoint id may instead be one of the id forms below,
// told by its n (never the length of bytes in the arena, see put).
type span struct{ off, n uint32 }

// The forms of a checkpoint id's span that keep nothing in the arena: a
// superstep's checkpoint then adds a few bytes to it (its plan's node,
// its write's value), not the 24 of its id.
const (
	// idOwn is the n of an entry's own id made by the executor (ids.go
	// in package runtime): 16 hex digits of its created time (the entry's
	// Unix nanoseconds) and 8 of a counter (off).
	idOwn = math.MaxUint32
	// idRef is the n of the id of entry off of the thread (a parent, a
	// plan, a delta's base).
	idRef = math.MaxUint32 - 1
)

// memCP is a stored checkpoint: a full snapshot (its channels in its
// extra), or the delta of its parent (its writes; of another checkpoint
// when its extra says so). Its plan is the one made at it unless its
// extra says otherwise. It is 96 bytes: blocks of them fill the
// allocator's size classes.
type memCP struct {
	id, parent span
	step       int
	created    int64   // Unix nanoseconds, when plainTime (else in extra)
	task1      memTask // when ntasks is 1; else task1.node.off is where tasks holds its plan
	write1     memWrite
	ntasks     uint32 // task1, or tasks[task1.node.off:][:ntasks]
	nwrites    uint32 // likewise with write1 and writes (write1.channel.off)
	extra      uint32 // 1 + its index in extras, 0 for none
	header     uint32 // its index in headers
	depth      int32  // deltas since the snapshot, this one included
	bytes      uint32 // delta bytes since the snapshot, this one included (at most MaxUint32)
	snap       uint32 // bytes of the snapshot the chain starts at (likewise)
}

// sat32 returns n, or MaxUint32 when n is more (a chain's bytes: a
// snapshot is then due, Compaction.Snapshot).
func sat32(n int) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

// memTask is a planned task without an input or a journal.
type memTask struct{ node, key span }

// memWrite is a ChannelWrite.
type memWrite struct {
	channel, value span
	append, merge  bool
	nilValue       bool
}

// memExtra is what an entry holds beyond its memCP.
type memExtra struct {
	channels json.RawMessage // a snapshot's channels
	plan     span            // the plan's id, when planSet
	base     span            // the id of the checkpoint a delta applies to, when baseSet
	full     bool            // a snapshot
	planSet  bool            // the plan was not made at this checkpoint
	baseSet  bool            // a delta of another checkpoint than its parent
	next     []TaskRef       // the plan, when a task has an input or a journal (or it is empty but not nil)
	pending  []PendingInterrupt
	created  time.Time
	timed    bool // created is the time stamp (not plainTime)
	nextSet  bool // next is the plan
}

// memHeader is what the checkpoints of a thread mostly share.
type memHeader struct {
	fingerprint, migratedFrom string
	format                    int
}

// ErrMemoryFull is matched (errors.Is) by the error of a Memory write that
// would hold more than 4 GiB of ids and delta values in one thread.
var ErrMemoryFull = errors.New("memory: a thread's checkpoints hold 4 GiB; prune it (Memory.Prune) or use a durable store")

// Entry blocks: blockFirst entries, then twice as many, and so on up to
// blockMax a block: a short thread holds little room it does not use.
const (
	blockFirst = 8
	blockMax   = 256
	// blocksGrowing is how many blocks grow; they hold growingEntries.
	blocksGrowing  = 5
	growingEntries = blockFirst * (1<<blocksGrowing - 1)
)

// blockOf returns the block and the place in it of entry i.
func blockOf(i int) (b, j int) {
	if i < growingEntries {
		b = bits.Len(uint(i/blockFirst+1)) - 1
		return b, i - blockFirst*(1<<b-1)
	}
	i -= growingEntries
	return blocksGrowing + i/blockMax, i % blockMax
}

// blockSize is the size of block b.
func blockSize(b int) int { return blockFirst << min(b, blocksGrowing) }

// at returns entry i.
func (t *memThread) at(i int) *memCP {
	if i < blockFirst {
		return &t.blocks[0][i]
	}
	b, j := blockOf(i)
	return &t.blocks[b][j]
}

// newEntry returns room for entry t.n, counted.
func (t *memThread) newEntry() *memCP {
	b, j := blockOf(t.n)
	if b == len(t.blocks) {
		t.blocks = append(t.blocks, make([]memCP, blockSize(b)))
	}
	t.n++
	return &t.blocks[b][j]
}

// latest returns the index of the latest entry (-1 for none).
func (t *memThread) latest() int { return t.n - 1 }

// bytesOf returns the arena bytes of s.
func (t *memThread) bytesOf(s span) []byte { return t.arena[s.off : s.off+s.n : s.off+s.n] }

// str returns s, a span that is not an entry's own id, as a string,
// sharing the arena's bytes (never written again).
func (t *memThread) str(s span) string {
	if s.n == idRef {
		return t.idOf(t.at(int(s.off)))
	}
	if s.n == 0 {
		return ""
	}
	return unsafe.String(&t.arena[s.off], s.n)
}

// put copies b into the arena.
func (t *memThread) put(b []byte) (span, error) {
	if len(b) == 0 {
		return span{}, nil
	}
	if uint64(len(t.arena))+uint64(len(b)) >= idRef {
		return span{}, fmt.Errorf("%w (thread %q)", ErrMemoryFull, t.id)
	}
	if cap(t.arena)-len(t.arena) < len(b) {
		t.arena = slices.Grow(t.arena, max(len(b), min(cap(t.arena), 1<<20), 256))
	}
	at := len(t.arena)
	t.arena = append(t.arena, b...)
	return span{uint32(at), uint32(len(b))}, nil
}

// putString copies s into the arena, or returns like when it spells s.
func (t *memThread) putString(s string, like span) (span, error) {
	if like.n > 0 && t.spells(like, s) {
		return like, nil
	}
	return t.put(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// spells reports whether s, a span that is not an entry's own id, spells
// str.
func (t *memThread) spells(s span, str string) bool {
	if s.n == idRef {
		return t.isID(t.at(int(s.off)), str)
	}
	return string(t.bytesOf(s)) == str
}

// isID reports whether id is the id of e.
func (t *memThread) isID(e *memCP, id string) bool {
	if e.id.n != idOwn {
		return string(t.bytesOf(e.id)) == id
	}
	ns, n, ok := hexid.Parse(id)
	return ok && ns == e.created && n == e.id.off
}

// idOf returns the id of e.
func (t *memThread) idOf(e *memCP) string {
	if e.id.n != idOwn {
		return t.str(e.id)
	}
	var b [hexid.Len]byte
	hexid.Put(b[:], e.created, e.id.off)
	return string(b[:])
}

// putID returns the span of id, the own id of an entry created at ns
// (Unix nanoseconds, plain: plainTime).
func (t *memThread) putID(id string, ns int64, plain bool) (span, error) {
	if plain {
		if at, n, ok := hexid.Parse(id); ok && at == ns {
			return span{n, idOwn}, nil
		}
	}
	return t.put(unsafe.Slice(unsafe.StringData(id), len(id)))
}

// putRef records id, which names entry i unless i is -1, as a
// reference to it, or else copies it.
func (t *memThread) putRef(id string, i int, known bool) (span, error) {
	if i >= 0 && (known || t.isID(t.at(i), id)) {
		return span{uint32(i), idRef}, nil
	}
	return t.put(unsafe.Slice(unsafe.StringData(id), len(id)))
}

// index returns the index of the checkpoint id.
func (t *memThread) index(id string) (int, bool) {
	if i := t.latest(); i >= 0 && (id == t.lastID || t.isID(t.at(i), id)) {
		return i, true
	}
	if t.byID == nil {
		t.byID = map[string]int{}
	}
	for ; t.indexed < t.n; t.indexed++ {
		t.byID[t.idOf(t.at(t.indexed))] = t.indexed
	}
	i, ok := t.byID[id]
	return i, ok
}

// baseSpan returns the id of the checkpoint e, a delta, applies to.
func (t *memThread) baseSpan(e *memCP) span {
	if e.extra != 0 {
		if x := &t.extras[e.extra-1]; x.baseSet {
			return x.base
		}
	}
	return e.parent
}

// baseOf returns the index of the checkpoint e, a delta, applies to.
func (t *memThread) baseOf(e *memCP) (int, bool) {
	if b := t.baseSpan(e); b.n == idRef {
		return int(b.off), true
	}
	return t.index(t.baseID(e))
}

// baseID returns the id of the checkpoint e, a delta, applies to.
func (t *memThread) baseID(e *memCP) string { return t.str(t.baseSpan(e)) }

// planID returns the id of the checkpoint e's plan was made at.
func (t *memThread) planID(e *memCP) string {
	if e.extra != 0 {
		if x := &t.extras[e.extra-1]; x.planSet {
			return t.str(x.plan)
		}
	}
	return t.idOf(e)
}

// plainTime reports whether c can be kept as its Unix nanoseconds: a UTC
// time without a monotonic reading, within the years UnixNano spans.
func plainTime(c time.Time) bool {
	// The years by comparison, not Year: a checkpoint's write reads this,
	// and Year works out the date (twice) for it.
	return c.Location() == time.UTC && c == c.Round(0) && !c.Before(plainFrom) && c.Before(plainUntil)
}

// The time stamps plainTime keeps as Unix nanoseconds: from 1679 to the
// end of 2261 (UnixNano spans 1678 to 2262, partly).
var (
	plainFrom  = time.Date(1679, 1, 1, 0, 0, 0, 0, time.UTC)
	plainUntil = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// add appends an entry of cp, a snapshot of chans when base is "", else
// a delta of base with writes (its depth, bytes and snap set by the
// caller). Nothing of cp, chans or writes is kept but copies (chans and
// what extras hold: as Memory always kept them).
func (t *memThread) add(cp *Checkpoint, base string, writes []ChannelWrite, chans json.RawMessage) (*memCP, error) {
	prev := memCP{}
	if i := t.latest(); i >= 0 {
		prev = *t.at(i)
	}
	var err error
	var e memCP
	var x memExtra
	plain := plainTime(cp.Created)
	if plain {
		e.created = cp.Created.UnixNano()
	} else {
		x.created, x.timed = cp.Created, true
	}
	if e.id, err = t.putID(cp.ID, e.created, plain); err != nil {
		return nil, err
	}
	// The parent, plan and base as references to entries when they name
	// the latest one or this one, the ids given by the executor (the same
	// strings: compared by their pointers first).
	latest := t.latest()
	if cp.ParentID != "" {
		if e.parent, err = t.putRef(cp.ParentID, latest, latest >= 0 && cp.ParentID == t.lastID); err != nil {
			return nil, err
		}
	}
	switch {
	case cp.PlanID == cp.ID: // (the entry's own id)
	case latest >= 0 && t.planID(&prev) == cp.PlanID:
		// A pause's, like its parent's (a reference, or the same span).
		x.plan, x.planSet = span{uint32(latest), idRef}, true
		if px := t.extra(&prev); px.planSet {
			x.plan = px.plan
		}
	default:
		x.planSet = true
		if x.plan, err = t.putString(cp.PlanID, e.parent); err != nil {
			return nil, err
		}
	}
	if base == "" {
		x.full = true
	} else if base != cp.ParentID {
		x.baseSet = true
		if x.base, err = t.putRef(base, latest, false); err != nil {
			return nil, err
		}
	}
	e.step = cp.Step
	if base == "" {
		x.channels = chans
	}
	x.pending = slices.Clone(cp.Pending)
	plainNext := true
	for i := range cp.Next {
		if cp.Next[i].Input != nil || cp.Next[i].Journal != nil {
			plainNext = false
		}
	}
	if !plainNext || (cp.Next != nil && len(cp.Next) == 0 && base == "") {
		x.next, x.nextSet = slices.Clone(cp.Next), true
	} else if err := t.addTasks(&e, cp.Next, &prev); err != nil {
		return nil, err
	}
	if err := t.addWrites(&e, writes, &prev); err != nil {
		return nil, err
	}
	h := memHeader{fingerprint: cp.Fingerprint, migratedFrom: cp.MigratedFrom, format: cp.Format}
	if len(t.headers) == 0 || t.headers[len(t.headers)-1] != h {
		t.headers = append(t.headers, h)
	}
	e.header = uint32(len(t.headers) - 1)
	if x.channels != nil || x.next != nil || x.nextSet || x.pending != nil || x.timed || x.full || x.planSet || x.baseSet {
		t.extras = append(t.extras, x)
		e.extra = uint32(len(t.extras))
	}
	p := t.newEntry()
	*p = e
	t.lastID = cp.ID
	return p, nil
}

// addTasks records the plan next (tasks without inputs or journals) in e.
func (t *memThread) addTasks(e *memCP, next []TaskRef, prev *memCP) error {
	like := prev.task1
	one := func(r TaskRef) (memTask, error) {
		node, err := t.putString(r.Node, like.node)
		if err != nil {
			return memTask{}, err
		}
		key, err := t.putString(r.Key, node)
		if err != nil {
			return memTask{}, err
		}
		return memTask{node, key}, nil
	}
	e.ntasks = uint32(len(next))
	if len(next) == 1 {
		var err error
		e.task1, err = one(next[0])
		return err
	}
	e.task1.node.off = uint32(len(t.tasks))
	for _, r := range next {
		mt, err := one(r)
		if err != nil {
			return err
		}
		t.tasks = append(t.tasks, mt)
	}
	return nil
}

// addWrites records ws in e.
func (t *memThread) addWrites(e *memCP, ws []ChannelWrite, prev *memCP) error {
	one := func(w ChannelWrite, like span) (memWrite, error) {
		ch, err := t.putString(w.Channel, like)
		if err != nil {
			return memWrite{}, err
		}
		v, err := t.put(w.Value)
		return memWrite{channel: ch, value: v, append: w.Append, merge: w.Merge, nilValue: w.Value == nil}, err
	}
	e.nwrites = uint32(len(ws))
	if len(ws) == 1 {
		var err error
		e.write1, err = one(ws[0], prev.write1.channel)
		return err
	}
	e.write1.channel.off = uint32(len(t.writes))
	for _, w := range ws {
		mw, err := one(w, span{})
		if err != nil {
			return err
		}
		t.writes = append(t.writes, mw)
	}
	return nil
}

// extra returns the extras of e (zero for none).
func (t *memThread) extra(e *memCP) memExtra {
	if e.extra == 0 {
		return memExtra{}
	}
	return t.extras[e.extra-1]
}

// snapshot reports whether e is a full snapshot.
func (t *memThread) snapshot(e *memCP) bool { return e.extra != 0 && t.extras[e.extra-1].full }

// writesOf returns the writes of entry e (new slices; the values share
// the arena).
func (t *memThread) writesOf(e *memCP) []ChannelWrite {
	one := t.write
	if e.nwrites == 1 {
		return []ChannelWrite{one(e.write1)}
	}
	out := make([]ChannelWrite, e.nwrites)
	for i := range out {
		out[i] = one(t.writes[int(e.write1.channel.off)+i])
	}
	return out
}

// write returns w (its value shares the arena).
func (t *memThread) write(w memWrite) ChannelWrite {
	c := ChannelWrite{Channel: t.str(w.channel), Append: w.append, Merge: w.merge}
	if !w.nilValue {
		c.Value = t.bytesOf(w.value)
		if c.Value == nil {
			c.Value = json.RawMessage{}
		}
	}
	return c
}

// checkpoint returns a new Checkpoint of e, without its channels.
func (t *memThread) checkpoint(e *memCP) *Checkpoint {
	x := t.extra(e)
	h := t.headers[e.header]
	c := &Checkpoint{ID: t.idOf(e), ParentID: t.str(e.parent), ThreadID: t.id, PlanID: t.planID(e), Step: e.step,
		Pending: slices.Clone(x.pending), Fingerprint: h.fingerprint, Format: h.format, MigratedFrom: h.migratedFrom}
	if x.timed {
		c.Created = x.created
	} else {
		c.Created = time.Unix(0, e.created).UTC()
	}
	switch {
	case x.nextSet:
		c.Next = slices.Clone(x.next)
	case e.ntasks == 1:
		c.Next = []TaskRef{{Node: t.str(e.task1.node), Key: t.str(e.task1.key)}}
	case e.ntasks > 1:
		c.Next = make([]TaskRef, e.ntasks)
		for i := range c.Next {
			mt := t.tasks[int(e.task1.node.off)+i]
			c.Next[i] = TaskRef{Node: t.str(mt.node), Key: t.str(mt.key)}
		}
	}
	return c
}

// created returns the time stamp of e.
func (t *memThread) created(e *memCP) time.Time {
	if x := t.extra(e); x.timed {
		return x.created
	}
	return time.Unix(0, e.created).UTC()
}
