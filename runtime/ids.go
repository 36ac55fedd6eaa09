package runtime

import (
	"fmt"
	"sync"
	"time"
)

// newID returns a unique id that sorts after every id this process made
// before it (and, clocks permitting, other processes' earlier ids).
func newID() string {
	id, _ := idGen.next()
	return id
}

// newIDAt is newID with the time it was made (UTC), for a record that
// carries both: one clock read instead of two.
func newIDAt() (string, time.Time) {
	id, ns := idGen.next()
	return id, time.Unix(0, ns).UTC()
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
	s.mu.Lock()
	now := time.Now().UnixNano()
	if now <= s.last {
		now = s.last + 1
	}
	s.last = now
	s.n++
	n := s.n
	s.mu.Unlock()
	if now < 0 { // a clock before 1970
		return fmt.Sprintf("%016x%08x", now, n), now
	}
	// The same text as Sprintf("%016x%08x", now, n), without its cost:
	// ids are made once per run and once per checkpoint.
	const hex = "0123456789abcdef"
	var b [24]byte
	for i, v := 15, uint64(now); i >= 0; i, v = i-1, v>>4 {
		b[i] = hex[v&0xf]
	}
	for i, v := 23, n; i >= 16; i, v = i-1, v>>4 {
		b[i] = hex[v&0xf]
	}
	return string(b[:]), now
}
