package sqlite

import (
	"bytes"
	"container/list"
	"sync"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// DefaultCacheBytes is the size of a Store's cache of rebuilt channels
// unless CacheBytes says otherwise.
const DefaultCacheBytes = 64 << 20

// cacheLinks is how many deltas a cached thread keeps after its full
// channels before it applies them: a read applies at most this many, and a
// commit costs a copy of the state once per this many deltas.
const cacheLinks = 32

// channelsCache keeps, for the threads a Store wrote or read most recently,
// the full channels of one checkpoint and the deltas committed after it,
// so that reading a thread's latest checkpoint does not read and apply its
// chain of deltas again: the cost of a chat thread's turn then stays flat
// as its conversation grows, instead of growing with the chain (up to 1000
// deltas between snapshots).
//
// It is keyed by checkpoint id: a stored checkpoint's channels never
// change (compaction writes new rows; Prune, when it stores a delta again
// in full, stores the same channels), so an entry stays right whatever
// other processes write; a thread deleted here is dropped. It holds at most max bytes of channels and deltas, dropping
// the threads used least recently.
type channelsCache struct {
	mu      sync.Mutex
	max     int
	bytes   int
	threads map[string]*cachedThread
	lru     list.List // of *cachedThread, the most recently used first
}

// cachedThread is one thread's entry: the full channels of checkpoint id,
// then links, the deltas of the checkpoints committed after it, each of
// the one before.
type cachedThread struct {
	thread   string
	id       string
	channels []byte
	links    []cachedLink
	bytes    int
	elem     *list.Element
}

// cachedLink is a checkpoint stored as a delta of the entry's previous
// checkpoint.
type cachedLink struct {
	id     string
	writes []checkpoint.ChannelWrite
}

func newChannelsCache(max int) *channelsCache {
	return &channelsCache{max: max, threads: map[string]*cachedThread{}}
}

// full returns a copy of the full channels of checkpoint id of thread,
// when the cache holds them or the deltas that lead to them.
func (c *channelsCache) full(thread, id string) ([]byte, bool) {
	if c == nil || id == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.threads[thread]
	if t == nil {
		return nil, false
	}
	if t.id == id {
		c.touch(t)
		return bytes.Clone(t.channels), true
	}
	for i, l := range t.links {
		if l.id != id {
			continue
		}
		deltas := make([][]checkpoint.ChannelWrite, i+1)
		for j := range deltas {
			deltas[j] = t.links[j].writes
		}
		ch, err := checkpoint.ApplyDeltas(t.channels, deltas...)
		if err != nil {
			c.drop(thread, t)
			return nil, false
		}
		// The entry moves up to id: reads ask for the latest.
		c.set(thread, t, id, ch, append([]cachedLink(nil), t.links[i+1:]...))
		c.touch(t)
		return bytes.Clone(ch), true
	}
	return nil, false
}

// put records channels (not retained: copied) as the full channels of
// checkpoint id of thread.
func (c *channelsCache) put(thread, id string, channels []byte) {
	if c == nil || id == "" || len(channels) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.threads[thread]
	if t == nil {
		t = &cachedThread{thread: thread}
		t.elem = c.lru.PushFront(t)
		c.threads[thread] = t
	}
	c.set(thread, t, id, bytes.Clone(channels), nil)
	c.touch(t)
	c.evict()
}

// extend records that checkpoint id of thread was stored as the delta
// writes (not retained: copied) of checkpoint base. It is kept only when
// base is the entry's last checkpoint; otherwise the entry stays as it is
// (its checkpoints' channels are still right).
func (c *channelsCache) extend(thread, id, base string, writes []checkpoint.ChannelWrite) {
	if c == nil || id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.threads[thread]
	if t == nil {
		return
	}
	last := t.id
	if n := len(t.links); n > 0 {
		last = t.links[n-1].id
	}
	if last != base {
		return
	}
	l := cachedLink{id: id, writes: make([]checkpoint.ChannelWrite, len(writes))}
	size := len(id)
	for i, w := range writes {
		w.Value = bytes.Clone(w.Value)
		l.writes[i] = w
		size += len(w.Channel) + len(w.Value)
	}
	if len(t.links) < cacheLinks {
		t.links = append(t.links, l)
		t.bytes += size
		c.bytes += size
	} else {
		deltas := make([][]checkpoint.ChannelWrite, 0, len(t.links)+1)
		for _, l := range t.links {
			deltas = append(deltas, l.writes)
		}
		ch, err := checkpoint.ApplyDeltas(t.channels, append(deltas, l.writes)...)
		if err != nil {
			c.drop(thread, t)
			return
		}
		c.set(thread, t, id, ch, nil)
	}
	c.touch(t)
	c.evict()
}

// forget drops thread's entry.
func (c *channelsCache) forget(thread string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.threads[thread]; t != nil {
		c.drop(thread, t)
	}
}

// set makes t the full channels of id followed by links, keeping the
// byte count.
func (c *channelsCache) set(thread string, t *cachedThread, id string, channels []byte, links []cachedLink) {
	size := len(id) + len(channels)
	for _, l := range links {
		size += len(l.id)
		for _, w := range l.writes {
			size += len(w.Channel) + len(w.Value)
		}
	}
	c.bytes += size - t.bytes
	t.id, t.channels, t.links, t.bytes = id, channels, links, size
}

func (c *channelsCache) touch(t *cachedThread) { c.lru.MoveToFront(t.elem) }

func (c *channelsCache) drop(thread string, t *cachedThread) {
	c.bytes -= t.bytes
	c.lru.Remove(t.elem)
	delete(c.threads, thread)
}

// evict drops the threads used least recently until the cache fits its
// size.
func (c *channelsCache) evict() {
	for c.bytes > c.max && c.lru.Len() > 0 {
		t := c.lru.Back().Value.(*cachedThread)
		c.drop(t.thread, t)
	}
}
