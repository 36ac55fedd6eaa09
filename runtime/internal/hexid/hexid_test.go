package hexid

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestPutSpellsSprintf(t *testing.T) {
	for _, tc := range []struct {
		ns int64
		n  uint32
	}{
		{0, 0},
		{1, 1},
		{0x0123456789abcdef, 0x89abcdef},
		{math.MaxInt64, math.MaxUint32},
		{1796503247902378370, 12},
		{0x00000000ffffffff, 0x10},
		{0x7fffffff00000000, 0xa0b0c0d0},
	} {
		var b [Len]byte
		Put(b[:], tc.ns, tc.n)
		want := fmt.Sprintf("%016x%08x", tc.ns, tc.n)
		if string(b[:]) != want {
			t.Errorf("Put(%d, %d) = %q, want %q", tc.ns, tc.n, b[:], want)
		}
		ns, n, ok := Parse(want)
		if !ok || ns != tc.ns || n != tc.n {
			t.Errorf("Parse(%q) = %d, %d, %v; want %d, %d, true", want, ns, n, ok, tc.ns, tc.n)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	good := "0123456789abcdef01234567"
	for _, id := range []string{
		"",
		good[:23],
		good + "0",
		"0123456789ABCDEF01234567", // upper case
		"0123456789abcdeg01234567",
		"0123456789abcdef0123456/",
		"0123456789abcdef0123456:",
		"0123456789abcdef0123456`",
		"8000000000000000" + "00000000", // a negative time
		"ffffffffffffffff" + "00000000",
		strings.Repeat(" ", Len),
		"0123456789abcdef\x00\x00\x00\x00\x00\x00\x00\x00",
	} {
		if ns, n, ok := Parse(id); ok {
			t.Errorf("Parse(%q) = %d, %d, true; want false", id, ns, n)
		}
	}
}

// FuzzParse checks Parse against its definition: it accepts exactly the
// texts Sprintf("%016x%08x") gives for a time that is not negative, and
// Put writes them back.
func FuzzParse(f *testing.F) {
	f.Add("0123456789abcdef01234567")
	f.Add("7fffffffffffffffffffffff")
	f.Add("0123456789abcdeF01234567")
	f.Fuzz(func(t *testing.T, id string) {
		ns, n, ok := Parse(id)
		var wns int64
		var wn uint32
		_, err := fmt.Sscanf(id, "%016x%08x", &wns, &wn)
		want := err == nil && len(id) == Len && wns >= 0 && fmt.Sprintf("%016x%08x", wns, wn) == id
		if ok != want {
			t.Fatalf("Parse(%q) ok = %v, want %v", id, ok, want)
		}
		if ok {
			var b [Len]byte
			Put(b[:], ns, n)
			if string(b[:]) != id {
				t.Fatalf("Put(Parse(%q)) = %q", id, b[:])
			}
		}
	})
}

func BenchmarkPut(b *testing.B) {
	var buf [Len]byte
	for i := 0; b.Loop(); i++ {
		Put(buf[:], 1796503247902378370+int64(i), uint32(i))
	}
}

func BenchmarkParse(b *testing.B) {
	id := "18eadc2f5e1b4a8200000c1a"
	for b.Loop() {
		if _, _, ok := Parse(id); !ok {
			b.Fatal("not parsed")
		}
	}
}
