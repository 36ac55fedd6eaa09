package runtime

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// stateDecodes counts the runs that decoded the state they start from, for
// tests.
var stateDecodes atomic.Int64

// stateCacheThreads is how many threads a Graph keeps the last state of.
const stateCacheThreads = 64

// stateCache keeps, for the threads a Graph ran last in this process, the
// state of each thread's latest checkpoint as the run that wrote it left
// it, so that the next run on the thread starts from it instead of
// decoding the checkpoint's channels: a long chat thread's run then does
// not decode the whole conversation again (that decoding was what still
// grew with the conversation once the stores stopped reading chains of
// deltas; BENCHMARKS.md).
//
// It is used only by graphs whose state a run holds in its decoded JSON
// form (Builder and FromSpec graphs: Values, normalized on every write,
// see jsonconv.Normalize), where the state a run left is exactly what
// decoding its checkpoint gives. An entry is keyed by the checkpointer and
// the thread and names the checkpoint it is the state of: a run whose
// thread's latest checkpoint is another one (written by another process,
// a fork) decodes as before. An entry is its own deep copy, taken from
// the cache by the run that uses it (a run that fails leaves nothing
// behind); a run hands the state it leaves to its caller, who may change
// it, and to the cache as another copy.
type stateCache[S any] struct {
	mu  sync.Mutex
	m   map[stateKey]*list.Element
	lru list.List // of *stateEntry[S], the most recently used first
}

// stateKey is a thread of a checkpointer.
type stateKey struct {
	cp     Checkpointer
	thread string
}

type stateEntry[S any] struct {
	key   stateKey
	id    string // the checkpoint whose state this is
	state S
}

// take returns, and removes, the state of checkpoint id of the thread.
func (c *stateCache[S]) take(k stateKey, id string) (S, bool) {
	var zero S
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[k]
	if el == nil {
		return zero, false
	}
	e := el.Value.(*stateEntry[S])
	c.lru.Remove(el)
	delete(c.m, k)
	if e.id != id {
		return zero, false
	}
	return e.state, true
}

// idOf returns the id of the checkpoint whose state the thread's entry
// holds, or "".
func (c *stateCache[S]) idOf(k stateKey) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[k]; el != nil {
		return el.Value.(*stateEntry[S]).id
	}
	return ""
}

// put records s as the state of checkpoint id of the thread.
func (c *stateCache[S]) put(k stateKey, id string, s S) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[stateKey]*list.Element{}
	}
	if el := c.m[k]; el != nil {
		e := el.Value.(*stateEntry[S])
		e.id, e.state = id, s
		c.lru.MoveToFront(el)
		return
	}
	c.m[k] = c.lru.PushFront(&stateEntry[S]{key: k, id: id, state: s})
	for c.lru.Len() > stateCacheThreads {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*stateEntry[S]).key)
	}
}

// forget drops the thread's entry.
func (c *stateCache[S]) forget(k stateKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[k]; el != nil {
		c.lru.Remove(el)
		delete(c.m, k)
	}
}

// stateCacheKey returns the cache key of the run's thread, and false when
// the run does not use the cache: no checkpointer, a subgraph's seeded
// run, or a program whose state is not held decoded (a generated one).
func (r *runner[S, U]) stateCacheKey() (stateKey, bool) {
	if r.cfg.cp == nil || r.seed != nil {
		return stateKey{}, false
	}
	if _, untyped := any(r.p).(*untyped); !untyped {
		return stateKey{}, false
	}
	return stateKeyOf(r.cfg.cp, r.cfg.thread)
}

// stateKeyOf returns the cache key of a thread of cp, and false when cp
// cannot be a map key (its type's == panics).
func stateKeyOf(cp Checkpointer, thread string) (k stateKey, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	k = stateKey{cp: cp, thread: thread}
	_ = k == k
	return k, true
}

// cachedState takes the state of checkpoint id: the one readStart took
// already, or the graph's cache entry.
func (r *runner[S, U]) cachedState(id string) (S, bool) {
	var zero S
	if r.heldAt != "" {
		st, at := r.held, r.heldAt
		r.held, r.heldAt = zero, ""
		if at == id {
			return st, true
		}
	}
	k, ok := r.stateCacheKey()
	if !ok {
		return zero, false
	}
	return r.g.states.take(k, id)
}

// readStart reads the checkpoint a run starts from (Get). A run on the
// thread's latest checkpoint whose state the graph's cache holds reads it
// without its channels when the Checkpointer can (checkpoint.LatestReader):
// when it is still the latest, the run takes the cached state (r.held,
// which load uses), and the store builds no channels. When another run
// took the entry first, or the checkpoint is of another version of the
// graph (checkVersion then compares its channels), the checkpoint is read
// again, whole.
func (r *runner[S, U]) readStart() (*Checkpoint, error) {
	if r.cfg.fromID == "" {
		if cp, ok, err := r.readHeld(); ok {
			return cp, err
		}
	}
	return r.cfg.cp.Get(r.ctx, r.cfg.thread, r.cfg.fromID)
}

// readHeld is readStart for a thread whose state the graph's cache holds,
// on a LatestReader; ok is false when it does not apply.
func (r *runner[S, U]) readHeld() (cp *Checkpoint, ok bool, err error) {
	lr, isLR := r.cfg.cp.(checkpoint.LatestReader)
	k, cached := r.stateCacheKey()
	if !isLR || !cached {
		return nil, false, nil
	}
	known := r.g.states.idOf(k)
	if known == "" {
		return nil, false, nil
	}
	cp, err = lr.GetLatest(r.ctx, r.cfg.thread, known)
	if err != nil || cp.ID != known || cp.Channels != nil {
		return cp, true, err
	}
	if fp, _ := r.g.versionDocument(); cp.Fingerprint == "" || cp.Fingerprint == fp {
		if st, ok := r.g.states.take(k, known); ok {
			r.held, r.heldAt = st, known
			return cp, true, nil
		}
	}
	cp, err = r.cfg.cp.Get(r.ctx, r.cfg.thread, known)
	return cp, true, err
}

// cacheState records, at the end of a run that ended well, a copy of the
// state it leaves as the state of the thread's latest checkpoint, when the
// state is that checkpoint's (r.stateAt).
func (r *runner[S, U]) cacheState() {
	if r.latest == nil || r.stateAt != r.latest.ID {
		return
	}
	k, ok := r.stateCacheKey()
	if !ok {
		return
	}
	v, _ := any(r.state).(Values)
	r.g.states.put(k, r.latest.ID, any(cloneValues(v)).(S))
}

// cloneValues deep-copies a state held in its decoded JSON form.
func cloneValues(v Values) Values {
	if v == nil {
		return nil
	}
	out := make(Values, len(v))
	for k, x := range v {
		out[k] = cloneJSON(x)
	}
	return out
}

func cloneJSON(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case Values:
		return cloneValues(x)
	}
	return v
}
