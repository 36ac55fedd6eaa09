package runtime_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestMemoryThreadWithoutCreationTime: a checkpoint stored without a
// creation time lists its thread as updated at the Unix epoch, as the
// SQL backends (which store 0) do, not at an overflowed instant.
func TestMemoryThreadWithoutCreationTime(t *testing.T) {
	m := checkpoint.NewMemory()
	if err := m.Put(t.Context(), &runtime.Checkpoint{ID: "c1", ThreadID: "t", PlanID: "c1", Channels: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	page, err := m.ListThreads(t.Context(), checkpoint.ThreadQuery{})
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
	for _, c := range []checkpoint.ThreadCursor{{Updated: 0, ID: ""}, {Updated: 1_800_000_000_123_456_789, ID: "a/b c\x00é"}, {Updated: -5, ID: "x"}} {
		_, got, err := checkpoint.CheckThreadQuery(checkpoint.ThreadQuery{Cursor: checkpoint.EncodeThreadCursor(c)})
		if err != nil || got == nil || *got != c {
			t.Errorf("cursor of %+v decodes to %+v, %v", c, got, err)
		}
	}
	if _, _, err := checkpoint.CheckThreadQuery(checkpoint.ThreadQuery{Cursor: "t1.bm90LWEtbnVtYmVy"}); !errors.Is(err, checkpoint.ErrThreadQuery) {
		t.Errorf("a cursor without a number: %v", err)
	}
}

// TestMatchThread pins the conditions of a ThreadQuery a backend that
// filters in Go applies with MatchThread: every condition given must
// hold, the update bounds are strict, and the cursor is not its business.
func TestMatchThread(t *testing.T) {
	at := time.Unix(100, 0)
	meta := map[string]string{"tenant": "acme", "kind": "expense"}
	tests := []struct {
		name string
		q    checkpoint.ThreadQuery
		want bool
	}{
		{"no condition", checkpoint.ThreadQuery{}, true},
		{"status holds", checkpoint.ThreadQuery{Status: runtime.StatusInterrupted}, true},
		{"status differs", checkpoint.ThreadQuery{Status: runtime.StatusDone}, false},
		{"every pair holds", checkpoint.ThreadQuery{Meta: map[string]string{"tenant": "acme", "kind": "expense"}}, true},
		{"one pair differs", checkpoint.ThreadQuery{Meta: map[string]string{"tenant": "acme", "kind": "trip"}}, false},
		{"a key the thread lacks", checkpoint.ThreadQuery{Meta: map[string]string{"owner": ""}}, false},
		{"updated after an earlier time", checkpoint.ThreadQuery{UpdatedAfter: at.Add(-time.Nanosecond)}, true},
		{"updated after the same time", checkpoint.ThreadQuery{UpdatedAfter: at}, false},
		{"updated before a later time", checkpoint.ThreadQuery{UpdatedBefore: at.Add(time.Nanosecond)}, true},
		{"updated before the same time", checkpoint.ThreadQuery{UpdatedBefore: at}, false},
		{"the cursor is ignored", checkpoint.ThreadQuery{Cursor: "garbage"}, true},
	}
	for _, tc := range tests {
		if got := checkpoint.MatchThread(tc.q, runtime.StatusInterrupted, meta, at.UnixNano()); got != tc.want {
			t.Errorf("%s: MatchThread = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestThreadCursorAfter pins the order of ListThreads that a cursor is a
// position in: newer updates first, then ids descending.
func TestThreadCursorAfter(t *testing.T) {
	c := checkpoint.ThreadCursor{Updated: 100, ID: "m"}
	tests := []struct {
		updated int64
		id      string
		want    bool
	}{
		{99, "z", true},   // older: later in the listing
		{101, "a", false}, // newer: already listed
		{100, "l", true},  // same time, smaller id
		{100, "m", false}, // the cursor's own thread
		{100, "n", false}, // same time, larger id
	}
	for _, tc := range tests {
		if got := c.After(tc.updated, tc.id); got != tc.want {
			t.Errorf("After(%d, %q) = %v, want %v", tc.updated, tc.id, got, tc.want)
		}
	}
}

// TestCheckThreadQueryLimits pins the page size CheckThreadQuery gives a
// backend: DefaultThreadLimit for 0, at most MaxThreadLimit, and a
// negative limit refused.
func TestCheckThreadQueryLimits(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{{0, checkpoint.DefaultThreadLimit}, {7, 7}, {checkpoint.MaxThreadLimit + 1, checkpoint.MaxThreadLimit}} {
		got, cursor, err := checkpoint.CheckThreadQuery(checkpoint.ThreadQuery{Limit: tc.limit})
		if err != nil || got != tc.want || cursor != nil {
			t.Errorf("limit %d: %d, %v, %v; want %d without cursor", tc.limit, got, cursor, err, tc.want)
		}
	}
	if _, _, err := checkpoint.CheckThreadQuery(checkpoint.ThreadQuery{Limit: -1}); !errors.Is(err, checkpoint.ErrThreadQuery) {
		t.Errorf("a negative limit: %v, want ErrThreadQuery", err)
	}
}

// TestCommitRecordsThreadWrite: a lease's Commit records the ThreadWrite
// it carries with the checkpoint, and a commit without one leaves the
// record as it was.
func TestCommitRecordsThreadWrite(t *testing.T) {
	m := checkpoint.NewMemory()
	ended := time.Unix(200, 0).UTC()
	w := &checkpoint.ThreadWrite{Meta: map[string]string{"tenant": "acme"}, Outcome: &checkpoint.ThreadOutcome{Status: runtime.StatusDone, RunID: "r-1", Ended: ended}}
	l, err := m.Lease(t.Context(), "t", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	commit := func(id string, w *checkpoint.ThreadWrite) {
		t.Helper()
		cp := &runtime.Checkpoint{ID: id, ThreadID: "t", PlanID: id, Channels: json.RawMessage(`{}`), Created: time.Unix(150, 0)}
		if err := l.Commit(t.Context(), checkpoint.Commit{Checkpoint: cp, Thread: w}); err != nil {
			t.Fatal(err)
		}
	}
	commit("c1", w)
	commit("c2", nil)
	page, err := m.ListThreads(t.Context(), checkpoint.ThreadQuery{Meta: map[string]string{"tenant": "acme"}})
	if err != nil || len(page.Threads) != 1 {
		t.Fatalf("ListThreads: %+v %v", page, err)
	}
	if d := cmp.Diff(*w.Outcome, page.Threads[0].Outcome); d != "" {
		t.Errorf("outcome (-want +got):\n%s", d)
	}
}

// TestOutcomeErrorIsCut pins MaxOutcomeError: a failed run's long error
// text is kept as its first bytes, cut at a character boundary and ended
// with "…", within MaxOutcomeError bytes.
func TestOutcomeErrorIsCut(t *testing.T) {
	long := strings.Repeat("é", checkpoint.MaxOutcomeError) // two bytes each
	g := mustCompile(t, runtime.NewBuilder("fail").Channel("x", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, errors.New(long) }).
		Edge(spec.Start, "a"))
	m := checkpoint.NewMemory()
	_, runErr := g.Thread(m, "t").Invoke(t.Context(), nil)
	if runErr == nil {
		t.Fatal("the run did not fail")
	}
	page, err := m.ListThreads(t.Context(), checkpoint.ThreadQuery{})
	if err != nil || len(page.Threads) != 1 {
		t.Fatalf("ListThreads: %+v %v", page, err)
	}
	got := page.Threads[0].Outcome.Error
	kept, ok := strings.CutSuffix(got, "…")
	if !ok || len(got) > checkpoint.MaxOutcomeError || len(got) < checkpoint.MaxOutcomeError-4 || !utf8.ValidString(got) || !strings.HasPrefix(runErr.Error(), kept) {
		t.Errorf("outcome error of %d bytes (%.40q…), want the run's error cut to at most %d bytes ending in …", len(got), got, checkpoint.MaxOutcomeError)
	}
}
