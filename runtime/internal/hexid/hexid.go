// Package hexid writes and reads the ids the executor gives runs and
// checkpoints: 24 lowercase hex digits, 16 of a time stamp (Unix
// nanoseconds, not negative) and 8 of a counter, the text
// fmt.Sprintf("%016x%08x", ns, n) gives. Both directions work on eight
// digits at a time in a 64-bit word: a durable superstep makes one id and
// the memory checkpointer reads it back, so a loop of 24 digits with a
// table look-up each was a visible part of a checkpoint's cost.
package hexid

import (
	"encoding/binary"
	"math/bits"
)

// Len is the length of an id.
const Len = 24

// Put writes the id of time ns (not negative) and counter n into b[:Len].
func Put(b []byte, ns int64, n uint32) {
	_ = b[Len-1]
	binary.LittleEndian.PutUint64(b[0:], digits(uint32(uint64(ns)>>32)))
	binary.LittleEndian.PutUint64(b[8:], digits(uint32(ns)))
	binary.LittleEndian.PutUint64(b[16:], digits(n))
}

// Parse returns the time and counter id spells; ok is false unless id is
// an id as Put writes it (Len lowercase hex digits, the time not
// negative).
func Parse(id string) (ns int64, n uint32, ok bool) {
	if len(id) != Len {
		return 0, 0, false
	}
	w0, w1, w2 := word(id[0:8]), word(id[8:16]), word(id[16:24])
	hi, lo, c := value(w0), value(w1), value(w2)
	// Every word that is not eight lowercase hex digits decodes to a
	// value whose digits differ from it: checking the three words this
	// way validates the id without a test per byte.
	if digits(hi) != w0 || digits(lo) != w1 || digits(c) != w2 || hi>>31 != 0 {
		return 0, 0, false
	}
	return int64(uint64(hi)<<32 | uint64(lo)), c, true
}

// word returns the eight bytes of s (len(s) == 8) as a little-endian
// word: s[0] is its lowest byte.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// digits returns the eight hex digits of x, most significant first, as a
// little-endian word (the first digit its lowest byte).
func digits(x uint32) uint64 {
	// One nibble a byte, the most significant in the highest byte...
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff0000ffff
	v = (v | v<<8) & 0x00ff00ff00ff00ff
	v = (v | v<<4) & 0x0f0f0f0f0f0f0f0f
	// ...then the most significant in the lowest byte, the first in
	// memory.
	v = bits.ReverseBytes64(v)
	// '0' + d, and 'a' - '0' - 10 more where d > 9 (d + 6 carries into
	// bit 4 exactly then; no byte overflows).
	above9 := ((v + 0x0606060606060606) >> 4) & 0x0101010101010101
	return v + 0x3030303030303030 + above9*('a'-'0'-10)
}

// value returns the number the eight hex digits of w spell (w as word
// gives it). For a w that is not eight lowercase hex digits the result
// is some number whose digits differ from w.
func value(w uint64) uint32 {
	// '0'-'9' keep their low nibble; 'a'-'f' (bit 6 set) add 9 to it.
	d := (w & 0x0f0f0f0f0f0f0f0f) + ((w>>6)&0x0101010101010101)*9
	v := bits.ReverseBytes64(d) & 0x0f0f0f0f0f0f0f0f
	v = (v | v>>4) & 0x00ff00ff00ff00ff
	v = (v | v>>8) & 0x0000ffff0000ffff
	v = (v | v>>16) & 0x00000000ffffffff
	return uint32(v)
}
