package runtime

import (
	"testing"
	"time"
)

func TestIDRoomIdsAreIdsThatStay(t *testing.T) {
	var room idRoom
	var ids []string
	var times []time.Time
	for range 3*idChunk + 5 { // across chunks
		id, at := room.newIDAt()
		ids = append(ids, id)
		times = append(times, at)
	}
	first := ids[0]
	copied := string([]byte(first))
	other := newID()
	for i, id := range ids {
		if len(id) != len(other) {
			t.Fatalf("id %q: length %d, newID's %d", id, len(id), len(other))
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("id %q does not sort after %q", id, ids[i-1])
		}
		if times[i].Location() != time.UTC || (i > 0 && !times[i].After(times[i-1])) {
			t.Fatalf("time %v of id %d: want UTC and after %v", times[i], i, times[max(i-1, 0)])
		}
	}
	if ids[0] != copied {
		t.Fatalf("the first id changed as more were made: %q, was %q", ids[0], copied)
	}
	if other <= ids[len(ids)-1] {
		t.Fatalf("newID %q, made after the room's ids, does not sort after its last, %q", other, ids[len(ids)-1])
	}
	if n := testing.AllocsPerRun(1000, func() { room.newIDAt() }); n > 0.1 {
		t.Errorf("newIDAt from a room: %v allocations per id, want at most one a chunk", n)
	}
}
