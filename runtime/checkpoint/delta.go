package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ChannelWrite is one channel's change between a checkpoint and the
// checkpoint it is stored as a change of (Delta.Base).
type ChannelWrite struct {
	// Channel is the channel's name as its JSON key is spelled in the
	// encoded state (with the quotes' content as encoded, escapes kept).
	Channel string `json:"c"`
	// Append is true when Value is a JSON array of the elements appended
	// to the base's array (an append channel's new messages).
	Append bool `json:"a,omitempty"`
	// Merge is true when Value is a JSON object of the members added to or
	// changed in the base's object (a merge channel's merged keys): a
	// changed member keeps its place, an added one goes before the first
	// member whose key sorts after its own (as bytes), else last.
	Merge bool `json:"m,omitempty"`
	// Value is the channel's whole new value unless Append or Merge says
	// otherwise.
	Value json.RawMessage `json:"v"`
}

// Delta is what a superstep changed in a thread's channels: the writes
// that turn the channels of checkpoint Base (of the same thread) into
// those of the checkpoint being stored. Writes are in the order of the
// channels in the encoded state, one per changed channel; a channel not
// listed is unchanged. Applying a delta gives back, byte for byte, the
// encoding a full snapshot would have held (ApplyDeltas).
type Delta struct {
	Base   string         `json:"base"`
	Writes []ChannelWrite `json:"writes"`
}

// Size is the number of encoded bytes the delta's writes hold.
func (d Delta) Size() int {
	n := 0
	for _, w := range d.Writes {
		n += len(w.Channel) + len(w.Value)
	}
	return n
}

// DeltaCheckpointer is a Checkpointer that stores a checkpoint as what
// changed since another one, so that a superstep writes what its updates
// touched and not the thread's whole state (an append channel: only the
// appended elements). The executor commits a Delta (Commit.Delta), when
// the backend is a DeltaCheckpointer, for every checkpoint whose parent
// it holds and whose channels keep the parent's channel list; otherwise
// it commits the full channels.
// Memory, the SQLite and the PostgreSQL stores implement it; a
// backend without it keeps working with full snapshots.
//
// Get and List return checkpoints stored by PutDelta with Channels
// reconstructed: byte-identical to ApplyDeltas of the base's channels and
// the delta. To keep that read bounded, a backend stores a full snapshot
// instead of a delta every so often (Compaction).
type DeltaCheckpointer interface {
	Checkpointer
	// PutDelta stores cp, whose channels are those of checkpoint d.Base of
	// the same thread with d.Writes applied, and drops the journals of the
	// task ids in done, in one atomic commit, without a lease (a run
	// commits deltas through Lease.Commit). cp.Channels is ignored. It
	// fails with an error matching ErrNotFound when the thread has no
	// checkpoint d.Base.
	PutDelta(ctx context.Context, cp *Checkpoint, d Delta, done []string) error
}

// Compaction says how often a DeltaCheckpointer stores a full snapshot of
// a thread's channels instead of a delta: when the chain of deltas since
// the last snapshot would reach Every deltas, or Bytes encoded bytes of
// deltas. Reading a checkpoint then costs one snapshot plus at most Every
// deltas, however long the thread.
//
// Bytes 0 (the default) adapts to the thread: a snapshot is written once
// the chain holds as many delta bytes as the snapshot it starts at (at
// least MinCompactionBytes). A read then decodes at most about twice the
// state, and the snapshots of a growing thread (a chat's messages) come at
// geometrically growing sizes, so together they take about twice the final
// state instead of one copy every Every supersteps.
type Compaction struct {
	Every int
	Bytes int
}

// DefaultCompaction is a snapshot every 1000 deltas, or once the deltas
// outweigh the snapshot.
var DefaultCompaction = Compaction{Every: 1000}

// MinCompactionBytes is the fewest delta bytes after which an adaptive
// Compaction (Bytes 0) writes a snapshot.
const MinCompactionBytes = 64 << 10

// WithDefaults returns c with a zero Every set from DefaultCompaction.
func (c Compaction) WithDefaults() Compaction {
	if c.Every <= 0 {
		c.Every = DefaultCompaction.Every
	}
	if c.Bytes < 0 {
		c.Bytes = 0
	}
	return c
}

// Snapshot reports whether a checkpoint whose base is depth deltas and
// chainBytes delta bytes past its snapshot (of snapBytes bytes) should be
// stored as a full snapshot rather than as a delta of more bytes.
func (c Compaction) Snapshot(depth, chainBytes, more, snapBytes int) bool {
	c = c.WithDefaults()
	limit := c.Bytes
	if limit == 0 {
		limit = max(snapBytes, MinCompactionBytes)
	}
	return depth+1 >= c.Every || chainBytes+more >= limit
}

// ErrDelta is matched (errors.Is) by the error of ApplyDeltas when a delta
// does not fit the channels it is applied to: the stored chain is damaged.
var ErrDelta = errors.New("a checkpoint delta does not fit the channels it applies to")

// member is one top-level member of an encoded state: the key's bytes
// (between the quotes) and the value's.
type member struct{ key, val []byte }

// splitObject splits the JSON object data into its top-level members, in
// order, without copying. ok is false when data is not a JSON object.
func splitObject(data []byte, dst []member) (out []member, ok bool) {
	out = dst[:0]
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return out, skipWS(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		end := scanString(data, i)
		if end < 0 {
			return nil, false
		}
		key := data[i+1 : end-1]
		i = skipWS(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipWS(data, i+1)
		vend := scanValue(data, i)
		if vend < 0 {
			return nil, false
		}
		out = append(out, member{key: key, val: data[i:vend]})
		i = skipWS(data, vend)
		if i >= len(data) {
			return nil, false
		}
		if data[i] == '}' {
			return out, skipWS(data, i+1) == len(data)
		}
		if data[i] != ',' {
			return nil, false
		}
		i = skipWS(data, i+1)
	}
}

func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index just past the JSON string starting at
// data[i] (a '"'), or -1.
func scanString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// scanValue returns the index just past the JSON value starting at
// data[i], or -1. The value is assumed well formed (it comes from an
// encoder); only its extent is found.
func scanValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return scanString(data, i)
	case '{', '[':
		return scanClose(data, i, 0)
	default:
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' &&
			data[j] != ' ' && data[j] != '\t' && data[j] != '\n' && data[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// Differ finds the delta between successive encoded states of a thread
// (the writes of a Delta). It keeps the members of the last state it was
// handed as next, so that the following diff, whose prev is that state,
// does not split it again. The zero Differ is ready to use; it is not safe
// for concurrent use.
type Differ struct {
	data      []byte // the state ms splits
	ms, spare []member
}

// Writes returns the writes that turn the encoded state prev into next.
// ok is false when a delta cannot express the change (the channel list
// differs, or either is not a compact JSON object): store a full snapshot.
// An unchanged channel costs a comparison of its bytes, an appended array
// a comparison and a scan of the new elements; only a channel whose value
// changed otherwise is scanned whole.
func (c *Differ) Writes(prev, next []byte) (writes []ChannelWrite, ok bool) {
	if !sameBytes(c.data, prev) {
		ms, ok := splitObject(prev, c.ms)
		c.data, c.ms = nil, ms
		if !ok || !distinctKeys(ms) {
			return nil, false
		}
	}
	out := c.spare[:0]
	if len(next) < 2 || next[0] != '{' {
		c.data = nil
		return nil, false
	}
	pos := 1
	for i, m := range c.ms {
		if i > 0 {
			if pos >= len(next) || next[pos] != ',' {
				c.data = nil
				return nil, false
			}
			pos++
		}
		// The same key, quoted, then a colon.
		k := pos + 1 + len(m.key)
		if k+1 >= len(next) || next[pos] != '"' || next[k] != '"' || next[k+1] != ':' || !bytes.Equal(next[pos+1:k], m.key) {
			c.data = nil
			return nil, false
		}
		key := next[pos+1 : k]
		pos = k + 2
		old, rest := m.val, next[k+2:]
		if n := len(old); len(rest) > n && bytes.HasPrefix(rest, old) && (rest[n] == ',' || rest[n] == '}') {
			out = append(out, member{key: key, val: rest[:n]})
			pos += n
			continue
		}
		w := ChannelWrite{Channel: string(key)}
		var end int
		if n := len(old); n > 2 && old[0] == '[' && old[n-1] == ']' && len(rest) > n && rest[n-1] == ',' && bytes.Equal(rest[:n-1], old[:n-1]) {
			// An array that kept its elements and gained more.
			end = scanTail(rest, n)
			if end < 0 {
				c.data = nil
				return nil, false
			}
			v := make([]byte, 0, end-n+1)
			w.Append, w.Value = true, append(append(v, '['), rest[n:end]...)
		} else {
			end = scanValue(rest, 0)
			if end < 0 {
				c.data = nil
				return nil, false
			}
			if d, ok := mergeWrite(old, rest[:end]); ok {
				w.Merge, w.Value = true, d
			} else {
				w.Value = bytes.Clone(rest[:end])
			}
		}
		out = append(out, member{key: key, val: rest[:end]})
		writes = append(writes, w)
		pos += end
	}
	if pos != len(next)-1 || next[pos] != '}' {
		c.data = nil
		return nil, false
	}
	c.data, c.ms, c.spare = next, out, c.ms
	return writes, true
}

// distinctKeys reports whether no two of ms have the same key bytes. A
// state with a repeated channel cannot be diffed: a write names its
// channel, and it would reach only one of the two. Encoders never repeat a
// key, so this is a guard against a hand-edited or damaged document; it
// costs a check of the keys when a state is split, not per superstep.
func distinctKeys(ms []member) bool {
	if len(ms) <= 16 { // a few comparisons beat a set's allocation
		for i := range ms {
			for j := i + 1; j < len(ms); j++ {
				if bytes.Equal(ms[i].key, ms[j].key) {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		if _, dup := seen[string(m.key)]; dup {
			return false
		}
		seen[string(m.key)] = struct{}{}
	}
	return true
}

// mergeWrite returns the members of object next that are new or changed
// against object prev, as a JSON object, when applying them to prev
// (mergeInto) gives next byte for byte and they are fewer bytes than next:
// a merge channel's superstep then stores the keys it merged, not the
// whole map. ok is false otherwise (a member was removed, the order does
// not follow the insertion rule, or nothing would be saved).
func mergeWrite(prev, next []byte) (delta []byte, ok bool) {
	if len(prev) < 2 || len(next) < 2 || prev[0] != '{' || next[0] != '{' {
		return nil, false
	}
	pm, ok := splitObject(prev, nil)
	if !ok || len(pm) == 0 {
		return nil, false
	}
	nm, ok := splitObject(next, nil)
	if !ok || len(nm) < len(pm) {
		return nil, false
	}
	idx := make(map[string]int, len(pm))
	for i, m := range pm {
		idx[string(m.key)] = i
	}
	var changed []member
	kept := 0
	for _, m := range nm {
		i, found := idx[string(m.key)]
		if found {
			kept++
			if bytes.Equal(pm[i].val, m.val) {
				continue
			}
		}
		changed = append(changed, m)
	}
	if kept != len(pm) || len(changed) == 0 {
		return nil, false
	}
	delta = encodeMembers(nil, changed)
	if len(delta) >= len(next) {
		return nil, false
	}
	merged := mergeMembers(pm, idx, changed)
	if !bytes.Equal(encodeMembers(make([]byte, 0, len(next)), merged), next) {
		return nil, false
	}
	return delta, true
}

// mergeMembers applies the members of a merge write to ms (idx maps ms's
// keys to their places and is kept up to date): a member
// whose key is in ms replaces its value in place; another is inserted
// before the first member whose key sorts after its own, else appended.
func mergeMembers(ms []member, idx map[string]int, add []member) []member {
	for _, a := range add {
		if i, found := idx[string(a.key)]; found {
			ms[i].val = a.val
			continue
		}
		at := len(ms)
		for j := range ms {
			if bytes.Compare(ms[j].key, a.key) > 0 {
				at = j
				break
			}
		}
		ms = append(ms, member{})
		copy(ms[at+1:], ms[at:])
		ms[at] = a
		for j := at; j < len(ms); j++ {
			idx[string(ms[j].key)] = j
		}
	}
	return ms
}

// encodeMembers appends the JSON object of ms to dst.
func encodeMembers(dst []byte, ms []member) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(append(dst, '"'), m.key...), '"', ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}')
}

// scanTail returns the index just past the array whose elements continue
// at data[i] (inside the array, after a comma), or -1.
func scanTail(data []byte, i int) int { return scanClose(data, i, 1) }

// scanClose returns the index just past the bracket that brings the
// nesting depth, counted from data[i] on, from depth back to 0, or -1.
func scanClose(data []byte, i, depth int) int {
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			e := scanString(data, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// mergedObject is a channel's object while ApplyDeltas merges into it.
type mergedObject struct {
	ms  []member
	idx map[string]int
}

// mergeApply applies the merge write w to channel i: the members are
// split once, at its first merge, and encoded once, at the end.
func mergeApply(ms []member, tails [][]byte, merged []*mergedObject, i int, w ChannelWrite) error {
	add, ok := splitObject(w.Value, nil)
	if !ok || len(add) == 0 {
		return fmt.Errorf("%w: the merge into channel %q is not a non-empty JSON object", ErrDelta, w.Channel)
	}
	m := merged[i]
	if m == nil {
		if tails[i] != nil {
			return fmt.Errorf("%w: channel %q, merged into, is an array", ErrDelta, w.Channel)
		}
		base, ok := splitObject(ms[i].val, nil)
		if !ok {
			return fmt.Errorf("%w: channel %q, merged into, is not a JSON object", ErrDelta, w.Channel)
		}
		m = &mergedObject{ms: base, idx: make(map[string]int, len(base))}
		for j, b := range base {
			m.idx[string(b.key)] = j
		}
		merged[i] = m
	}
	m.ms = mergeMembers(m.ms, m.idx, add)
	return nil
}

// ApplyDeltas returns the encoded state base with the deltas' writes
// applied in order: the channels a full snapshot of the last delta's
// checkpoint would have held, byte for byte. The work is linear in the
// size of base and of the deltas (appends to one channel are gathered
// before the object is rebuilt). An error matches ErrDelta.
func ApplyDeltas(base []byte, deltas ...[]ChannelWrite) (json.RawMessage, error) {
	ms, ok := splitObject(base, nil)
	if !ok {
		return nil, fmt.Errorf("%w: the base channels are not a JSON object", ErrDelta)
	}
	idx := make(map[string]int, len(ms))
	for i, m := range ms {
		idx[string(m.key)] = i
	}
	if len(idx) != len(ms) {
		return nil, fmt.Errorf("%w: the base channels repeat a key", ErrDelta)
	}
	// tails[i] holds elements appended to member i since its value was
	// last set, as ",e1,e2" (without the brackets); merged[i] the members
	// of member i's object once a merge write touched it.
	tails := make([][]byte, len(ms))
	var merged []*mergedObject
	for _, writes := range deltas {
		for _, w := range writes {
			i, found := idx[w.Channel]
			if !found {
				return nil, fmt.Errorf("%w: channel %q is not in the base", ErrDelta, w.Channel)
			}
			if w.Merge {
				if merged == nil {
					merged = make([]*mergedObject, len(ms))
				}
				if err := mergeApply(ms, tails, merged, i, w); err != nil {
					return nil, err
				}
				continue
			}
			if merged != nil {
				merged[i] = nil
			}
			if !w.Append {
				ms[i].val, tails[i] = w.Value, nil
				continue
			}
			v := w.Value
			if len(v) < 3 || v[0] != '[' || v[len(v)-1] != ']' {
				return nil, fmt.Errorf("%w: the append to channel %q is not a non-empty JSON array", ErrDelta, w.Channel)
			}
			old := ms[i].val
			if len(old) < 3 || old[0] != '[' || old[len(old)-1] != ']' {
				return nil, fmt.Errorf("%w: channel %q, appended to, is not a non-empty JSON array", ErrDelta, w.Channel)
			}
			tails[i] = append(append(tails[i], ','), v[1:len(v)-1]...)
		}
	}
	for i, m := range merged {
		if m != nil {
			ms[i].val = encodeMembers(nil, m.ms)
		}
	}
	n := 2
	for i, m := range ms {
		n += len(m.key) + len(m.val) + len(tails[i]) + 4
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, '"'), m.key...), '"', ':')
		if tails[i] == nil {
			out = append(out, m.val...)
			continue
		}
		out = append(append(append(out, m.val[:len(m.val)-1]...), tails[i]...), ']')
	}
	return append(out, '}'), nil
}

// ChainLink is one stored checkpoint of a chain of deltas, for backends:
// Base is the checkpoint it is a delta of ("" for the full snapshot that
// starts the chain) and Channels what is stored for it (the snapshot's
// encoded channels, or a delta's writes encoded as a JSON list of
// ChannelWrite).
type ChainLink struct {
	Base     string
	Channels []byte
}

// RebuildChain returns the channels of a checkpoint stored as a delta:
// writes are its own stored writes, base the checkpoint it is a delta of,
// and chain the links of its chain by checkpoint id, back to the snapshot
// the chain starts at (links of other checkpoints may be there too). A link
// that is missing or a delta that does not fit is an error matching
// ErrDelta. Backends that implement DeltaCheckpointer read with it.
func RebuildChain(writes []byte, base string, chain map[string]ChainLink) (json.RawMessage, error) {
	var deltas [][]ChannelWrite
	cur := base
	for {
		var ws []ChannelWrite
		if err := json.Unmarshal(writes, &ws); err != nil {
			return nil, fmt.Errorf("%w: decode the delta on %s: %w", ErrDelta, cur, err)
		}
		deltas = append(deltas, ws)
		l, ok := chain[cur]
		if !ok || len(deltas) > len(chain)+1 {
			return nil, fmt.Errorf("%w: the chain's checkpoint %s is missing", ErrDelta, cur)
		}
		if l.Base == "" {
			slices.Reverse(deltas)
			return ApplyDeltas(l.Channels, deltas...)
		}
		writes, cur = l.Channels, l.Base
	}
}

// sameBytes reports whether a and b are the same slice.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// deltaWrites returns the writes that turn prev into next (Differ.Writes
// without a kept split).
func deltaWrites(prev, next []byte) (writes []ChannelWrite, ok bool) {
	var c Differ
	return c.Writes(prev, next)
}

// LatestReader is a Checkpointer that can read a thread's latest checkpoint
// without rebuilding the channels its caller already holds.
//
// A run of a Builder or FromSpec graph keeps, in its process, the state
// its thread's last run left (runtime's state cache). The next run on the
// thread reads the latest checkpoint through GetLatest with the id of the
// checkpoint that state is of: when nothing else wrote to the thread since,
// the store reads that checkpoint's row only and rebuilds no channels (a
// long chat thread's whole conversation), and the run starts from the
// state it holds.
// Memory, the SQLite and the PostgreSQL stores implement it; a backend
// without it is read with Get.
type LatestReader interface {
	// GetLatest returns what Get(ctx, threadID, "") returns, except that
	// the checkpoint's Channels are nil when its ID is known: the caller
	// holds them. It returns ErrNotFound when the thread has none.
	GetLatest(ctx context.Context, threadID, known string) (*Checkpoint, error)
}
