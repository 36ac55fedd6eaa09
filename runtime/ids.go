package runtime

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ilmek-go/ilmek/runtime/internal/hexid"
)

// newID returns a unique id that sorts after every id this process made
// before it (and, clocks permitting, other processes' earlier ids).
func newID() string {
	id, _ := idGen.next()
	return id
}

// idLen is the length of an id of a clock after 1970.
const idLen = hexid.Len

// idRoom is where a runner writes the ids of its checkpoints, idChunk at
// a time: a superstep's id costs no allocation of its own. Bytes once
// given to an id are never written again, so the ids, strings over them,
// stay immutable.
type idRoom struct{ b []byte }

const idChunk = 32

// newIDAt is a new id (newID) and the time it was made (UTC), for a
// record that carries both (one clock read), the id's bytes in r.
func (r *idRoom) newIDAt() (string, time.Time) {
	if cap(r.b)-len(r.b) < idLen {
		r.b = make([]byte, 0, idLen*idChunk)
	}
	at := len(r.b)
	b := r.b[at : at+idLen]
	ns, n := idGen.nextInto(b, clock.now())
	if ns < 0 {
		return fmt.Sprintf("%016x%08x", ns, n), time.Unix(0, ns).UTC()
	}
	r.b = r.b[:at+idLen]
	return unsafe.String(&b[0], idLen), time.Unix(0, ns).UTC()
}

// ids makes sortable unique ids: the time in nanoseconds, forced to grow
// within the process, and a counter.
type idSource struct {
	mu   sync.Mutex
	last int64
	n    uint32
}

var idGen idSource

// next returns a new id and the time in it (Unix nanoseconds).
func (s *idSource) next() (string, int64) {
	var b [idLen]byte
	now, n := s.nextInto(b[:], clock.read())
	if now < 0 { // a clock before 1970
		return fmt.Sprintf("%016x%08x", now, n), now
	}
	return string(b[:]), now
}

// nextInto writes a new id of the time now (Unix nanoseconds), or just
// after the last id's, to b (idLen bytes) and returns the time and the
// counter in it. For a clock before 1970 it writes nothing: that id is
// longer, and next spells it.
func (s *idSource) nextInto(b []byte, now int64) (int64, uint32) {
	s.mu.Lock()
	if now <= s.last {
		now = s.last + 1
	}
	s.last = now
	s.n++
	n := s.n
	s.mu.Unlock()
	if now < 0 {
		return now, n
	}
	// The same text as Sprintf("%016x%08x", now, n), without its cost:
	// ids are made once per run and once per checkpoint.
	hexid.Put(b, now, n)
	return now, n
}

// clock is the time of the checkpoints of running supersteps.
var clock coarseClock

// coarseClock is a clock read by a goroutine at most once a clockTick
// while ids are made with it (now), and stopped after clockIdle ticks
// without one: on some virtual machines time.Now costs more than a whole
// superstep (about 250 ns with kvm-clock, against 200 ns a superstep of a
// generated chain), so a superstep's checkpoint does not read it. Its
// time stamps run late by up to a tick (more on a loaded machine, where
// the goroutine is woken late) and never go back; every run's first id
// (its run id) reads the clock itself (read), so a checkpoint is never
// stamped before the run that wrote it started.
type coarseClock struct {
	ns      atomic.Int64 // the latest reading, Unix nanoseconds
	used    atomic.Bool  // now was called since the last tick
	running atomic.Bool  // the goroutine runs
}

const (
	clockTick = time.Millisecond
	clockIdle = 100
)

// now returns the time, as of the latest tick.
func (c *coarseClock) now() int64 {
	if !c.used.Load() {
		c.used.Store(true)
	}
	if c.running.Load() {
		return c.ns.Load()
	}
	n := c.read()
	if c.running.CompareAndSwap(false, true) {
		go c.tick()
	}
	return n
}

// read reads the clock and keeps what it read, unless the latest reading
// is later.
func (c *coarseClock) read() int64 {
	n := time.Now().UnixNano()
	for {
		old := c.ns.Load()
		if old >= n || c.ns.CompareAndSwap(old, n) {
			return n
		}
	}
}

// tick reads the clock every clockTick until it was not used for
// clockIdle ticks.
func (c *coarseClock) tick() {
	for idle := 0; idle < clockIdle; {
		time.Sleep(clockTick)
		c.read()
		if c.used.Swap(false) {
			idle = 0
		} else {
			idle++
		}
	}
	c.running.Store(false)
}
