package runtime_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
)

// TestMemoryThreadWithoutCreationTime: a checkpoint stored without a
// creation time lists its thread as updated at the Unix epoch, as the
// SQL backends (which store 0) do, not at an overflowed instant.
func TestMemoryThreadWithoutCreationTime(t *testing.T) {
	m := runtime.NewMemory()
	if err := m.Put(t.Context(), &runtime.Checkpoint{ID: "c1", ThreadID: "t", PlanID: "c1", Channels: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	page, err := m.ListThreads(t.Context(), runtime.ThreadQuery{})
	if err != nil || len(page.Threads) != 1 {
		t.Fatalf("ListThreads: %+v %v", page, err)
	}
	if u := page.Threads[0].Updated; !u.Equal(time.Unix(0, 0)) {
		t.Errorf("updated %v, want the Unix epoch", u)
	}
}

// TestThreadCursorRoundTrip: a cursor decodes to the position it encodes,
// thread ids with any bytes included, and a garbled one is refused.
func TestThreadCursorRoundTrip(t *testing.T) {
	for _, c := range []runtime.ThreadCursor{{Updated: 0, ID: ""}, {Updated: 1_800_000_000_123_456_789, ID: "a/b c\x00é"}, {Updated: -5, ID: "x"}} {
		_, got, err := runtime.CheckThreadQuery(runtime.ThreadQuery{Cursor: runtime.EncodeThreadCursor(c)})
		if err != nil || got == nil || *got != c {
			t.Errorf("cursor of %+v decodes to %+v, %v", c, got, err)
		}
	}
	if _, _, err := runtime.CheckThreadQuery(runtime.ThreadQuery{Cursor: "t1.bm90LWEtbnVtYmVy"}); !errors.Is(err, runtime.ErrThreadQuery) {
		t.Errorf("a cursor without a number: %v", err)
	}
}
