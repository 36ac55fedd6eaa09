package genimpl

import (
	"encoding/json"
	"fmt"

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Writes collects the writes of a generated program's EncodeWrites
// (WriteEncoder): one per channel a superstep's updates touched,
// in channel order.
type Writes struct {
	dst []checkpoint.ChannelWrite
	err error
}

// NewWrites starts collecting into dst (reused, from length 0). The
// values of dst's elements, up to its capacity, are reused too, as room for
// the new values: they must be those of an earlier Writes over dst that
// nothing holds any more (a runner's, once its Checkpointer returned from
// the commit that was handed them: a Commit keeps nothing of it).
func NewWrites(dst []checkpoint.ChannelWrite) Writes {
	return Writes{dst: dst[:0]}
}

// spare returns the value of the element the next write takes, an earlier
// write's (nil for none), for its bytes' room; encoding/json's values do
// not use it (they are the encoder's), nor the values of Raw.
func (w *Writes) spare() json.RawMessage {
	if len(w.dst) < cap(w.dst) {
		return w.dst[:len(w.dst)+1][len(w.dst)].Value
	}
	return nil
}

// Value writes channel key's whole new value v.
func (w *Writes) Value(key string, v any) {
	w.add(checkpoint.ChannelWrite{Channel: key}, v)
}

// Raw writes channel key's whole new value, already JSON.
func (w *Writes) Raw(key, value string) {
	w.dst = append(w.dst, checkpoint.ChannelWrite{Channel: key, Value: json.RawMessage(value)})
}

func (w *Writes) add(cw checkpoint.ChannelWrite, v any) {
	if w.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		w.err = fmt.Errorf("channel %q %w", cw.Channel, err)
		return
	}
	cw.Value = data
	w.dst = append(w.dst, cw)
}

// Done returns the writes (ok true) or the first value that could not be
// encoded.
func (w *Writes) Done() ([]checkpoint.ChannelWrite, bool, error) {
	if w.err != nil {
		return w.dst, false, w.err
	}
	return w.dst, true, nil
}

// Wrote reports whether some update writes the channel field reads.
func Wrote[U any](updates []U, field func(*U) bool) bool {
	for i := range updates {
		if field(&updates[i]) {
			return true
		}
	}
	return false
}

// LastWrite writes last_write channel key's new value *v when wrote (some
// update wrote it), and reports false when it cannot: the channel was not
// set before (had is false), so a delta cannot say it entered the
// encoding.
func LastWrite[T any](w *Writes, key string, wrote, had bool, v *T) bool {
	switch {
	case !wrote:
		return true
	case !had:
		return false
	}
	addValue(w, checkpoint.ChannelWrite{Channel: key}, *v)
	return true
}

// Append writes append channel key, whose value went from prev to next
// (next extends prev): the appended elements, or the whole list when prev
// was empty; nothing when nothing was appended.
func Append[E any](w *Writes, key string, prev, next []E) {
	switch {
	case len(next) == len(prev):
	case len(prev) == 0:
		addValue(w, checkpoint.ChannelWrite{Channel: key}, next)
	default:
		addValue(w, checkpoint.ChannelWrite{Channel: key, Append: true}, next[len(prev):])
	}
}

// Merge writes merge channel key, whose value went from prev to next
// through the maps that field reads from updates (nil: not written): the
// merged keys with their values in next, or the whole map when prev was
// empty or a key would be escaped in JSON (the stored order of a merge
// write's new keys is then not the encoder's).
func Merge[U, V any](w *Writes, key string, prev, next map[string]V, updates []U, field func(*U) map[string]V) {
	if !Wrote(updates, func(u *U) bool { return field(u) != nil }) {
		return
	}
	if len(prev) == 0 || !jsonconv.PlainKeys(next) {
		if next == nil {
			w.Raw(key, "{}")
			return
		}
		w.Value(key, next)
		return
	}
	part := map[string]V{}
	for i := range updates {
		for k := range field(&updates[i]) {
			part[k] = next[k]
		}
	}
	if len(part) > 0 {
		w.add(checkpoint.ChannelWrite{Channel: key, Merge: true}, part)
	}
}
