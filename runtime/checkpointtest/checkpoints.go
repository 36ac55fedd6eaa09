package checkpointtest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var checkpointContracts = []contract{
	{"PutGetLatest", testPutGetLatest},
	{"GetByID", testGetByID},
	{"NotFound", testNotFound},
	{"ListNewestFirstWithLimit", testList},
	{"LatestIsMostRecentlyPut", testLatestIsMostRecentlyPut},
	{"ForkTwoChildrenOfOneParent", testFork},
	{"ThreadsAreSeparate", testThreadsSeparate},
	{"RoundTripSendsAndInterrupts", testRoundTrip},
	{"StoredCopiesAreIndependent", testCopies},
	{"DeleteThread", testDeleteThread},
}

func put(t *testing.T, cp runtime.Checkpointer, c *runtime.Checkpoint, done ...string) *runtime.Checkpoint {
	t.Helper()
	if err := cp.Put(t.Context(), c, done); err != nil {
		t.Fatalf("Put(%s of thread %q): %v", c.ID, c.ThreadID, err)
	}
	return c
}

func get(t *testing.T, cp runtime.Checkpointer, thread, id string) *runtime.Checkpoint {
	t.Helper()
	c, err := cp.Get(t.Context(), thread, id)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", thread, id, err)
	}
	return c
}

func list(t *testing.T, cp runtime.Checkpointer, thread string, limit int) []string {
	t.Helper()
	cps, err := cp.List(t.Context(), thread, limit)
	if err != nil {
		t.Fatalf("List(%q, %d): %v", thread, limit, err)
	}
	return ids(cps)
}

func testPutGetLatest(t *testing.T, cp runtime.Checkpointer) {
	var prev string
	for i := range 3 {
		c := put(t, cp, mk("t", prev, i))
		sameCheckpoint(t, c, get(t, cp, "t", ""))
		prev = c.ID
	}
}

func testGetByID(t *testing.T, cp runtime.Checkpointer) {
	a := put(t, cp, mk("t", "", 0))
	b := put(t, cp, mk("t", a.ID, 1))
	c := put(t, cp, mk("t", b.ID, 2))
	for _, want := range []*runtime.Checkpoint{a, b, c} {
		sameCheckpoint(t, want, get(t, cp, "t", want.ID))
	}
}

func testNotFound(t *testing.T, cp runtime.Checkpointer) {
	a := put(t, cp, mk("t", "", 0))
	tests := []struct{ thread, id string }{
		{"nobody", ""},
		{"nobody", a.ID},
		{"t", "no-such-id"},
		{"T", ""}, // thread ids are case-sensitive
	}
	for _, tc := range tests {
		c, err := cp.Get(t.Context(), tc.thread, tc.id)
		if !errors.Is(err, runtime.ErrNotFound) || c != nil {
			t.Errorf("Get(%q, %q) = %v, %v; want nil, ErrNotFound", tc.thread, tc.id, c, err)
		}
	}
	got, err := cp.List(t.Context(), "nobody", 0)
	if err != nil || len(got) != 0 {
		t.Errorf("List of an unknown thread = %v, %v; want empty, nil", ids(got), err)
	}
}

func testList(t *testing.T, cp runtime.Checkpointer) {
	var want []string // newest first
	prev := ""
	for i := range 5 {
		c := put(t, cp, mk("t", prev, i))
		prev = c.ID
		want = append([]string{c.ID}, want...)
	}
	tests := []struct {
		limit int
		want  []string
	}{
		{0, want},
		{-1, want},
		{1, want[:1]},
		{3, want[:3]},
		{5, want},
		{50, want},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, list(t, cp, "t", tc.limit)); d != "" {
			t.Errorf("List(limit %d) (-want +got):\n%s", tc.limit, d)
		}
	}
	cps, err := cp.List(t.Context(), "t", 2)
	if err != nil || len(cps) != 2 {
		t.Fatalf("List: %v %v", cps, err)
	}
	sameCheckpoint(t, get(t, cp, "t", want[1]), cps[1])
}

// testLatestIsMostRecentlyPut pins "latest": the checkpoint Put last, even
// when its id sorts before an earlier one's (ids from another process's
// clock).
func testLatestIsMostRecentlyPut(t *testing.T, cp runtime.Checkpointer) {
	late := mk("t", "", 0)
	early := mk("t", late.ID, 1)
	late.ID, early.ID = "b-"+late.ID, "a-"+early.ID
	early.ParentID = late.ID
	put(t, cp, late)
	put(t, cp, early)
	if got := get(t, cp, "t", ""); got.ID != early.ID {
		t.Errorf("latest = %s, want %s (the one Put last)", got.ID, early.ID)
	}
	if d := cmp.Diff([]string{early.ID, late.ID}, list(t, cp, "t", 0)); d != "" {
		t.Errorf("List is not in Put order, newest first (-want +got):\n%s", d)
	}
}

func testFork(t *testing.T, cp runtime.Checkpointer) {
	root := put(t, cp, mk("t", "", 0))
	left := put(t, cp, mk("t", root.ID, 1))
	right := put(t, cp, mk("t", root.ID, 2))
	if got := get(t, cp, "t", ""); got.ID != right.ID {
		t.Errorf("latest after a fork = %s, want the newest child %s", got.ID, right.ID)
	}
	for _, c := range []*runtime.Checkpoint{left, right} {
		if got := get(t, cp, "t", c.ID); got.ParentID != root.ID {
			t.Errorf("child %s has parent %q, want %s", c.ID, got.ParentID, root.ID)
		}
	}
	if d := cmp.Diff([]string{right.ID, left.ID, root.ID}, list(t, cp, "t", 0)); d != "" {
		t.Errorf("List of a forked thread (-want +got):\n%s", d)
	}
	grand := put(t, cp, mk("t", left.ID, 3)) // continue the older branch
	if got := get(t, cp, "t", ""); got.ID != grand.ID || got.ParentID != left.ID {
		t.Errorf("latest = %s (parent %s), want %s (parent %s)", got.ID, got.ParentID, grand.ID, left.ID)
	}
}

func testThreadsSeparate(t *testing.T, cp runtime.Checkpointer) {
	a := put(t, cp, mk("a", "", 1))
	b := put(t, cp, mk("b", "", 2))
	put(t, cp, mk("a/b", "", 3)) // a prefix or separator must not leak
	sameCheckpoint(t, a, get(t, cp, "a", ""))
	sameCheckpoint(t, b, get(t, cp, "b", ""))
	if _, err := cp.Get(t.Context(), "a", b.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Get of thread b's checkpoint through thread a: %v, want ErrNotFound", err)
	}
	if got := list(t, cp, "a", 0); len(got) != 1 || got[0] != a.ID {
		t.Errorf("List(a) = %v, want [%s]", got, a.ID)
	}
}

// rich is a checkpoint with every field set: sends with inputs, a static
// task, pending interrupts, awkward JSON.
func rich(thread, parent string) *runtime.Checkpoint {
	c := mk(thread, parent, 7)
	c.PlanID = "plan-" + c.ID
	c.Channels = json.RawMessage(`{"msg":"héllo \u003c<\u003e \"q\" \\ 😀","big":1e300,"tiny":0.1,"int":9007199254740993,"neg":-0,"null":null,"list":[1,[2,{"k":[]}]],"obj":{"z":1,"a":{}}}`)
	c.Next = []checkpoint.TaskRef{
		{Node: "plan", Key: "plan"},
		{Node: "worker", Key: "worker#0", Input: json.RawMessage(`{"item":"a","n":1}`)},
		{Node: "worker", Key: "worker#1", Input: json.RawMessage(`{"item":"b","deep":{"x":[true,false,null]}}`)},
		{Node: "worker", Key: "worker#2", Input: json.RawMessage(`{}`)},
	}
	c.Pending = []runtime.PendingInterrupt{
		{ID: "worker#0:interrupt#0", Key: "interrupt#0", Node: "worker", TaskID: c.PlanID + ":worker#0", Payload: json.RawMessage(`{"question":"approve?","amount":42.5}`),
			Actions: []checkpoint.Action{{Label: "Approve", Value: json.RawMessage(`{"ok":true}`)}, {Label: "Cancel"}}},
		{ID: "worker#1:approve:b#0", Key: "approve:b#0", Node: "worker", TaskID: c.PlanID + ":worker#1", Payload: json.RawMessage(`"plain string"`)},
	}
	c.Created = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
	c.Fingerprint, c.Format, c.MigratedFrom = "sha256:new", checkpoint.Format, "sha256:old"
	return c
}

func testRoundTrip(t *testing.T, cp runtime.Checkpointer) {
	root := put(t, cp, mk("t", "", 0))
	c := put(t, cp, rich("t", root.ID))
	sameCheckpoint(t, c, get(t, cp, "t", ""))
	sameCheckpoint(t, c, get(t, cp, "t", c.ID))
	cps, err := cp.List(t.Context(), "t", 1)
	if err != nil || len(cps) != 1 {
		t.Fatalf("List: %v, %v", cps, err)
	}
	sameCheckpoint(t, c, cps[0])
	// No next tasks and no pending interrupts stay empty.
	end := mk("t", c.ID, 8)
	end.Next, end.Pending = nil, nil
	put(t, cp, end)
	got := get(t, cp, "t", "")
	if len(got.Next) != 0 || len(got.Pending) != 0 {
		t.Errorf("a finished checkpoint came back with next %v pending %v", got.Next, got.Pending)
	}
}

// testCopies checks that the backend keeps what was Put, not the caller's
// slices: changing a Put or a returned checkpoint changes nothing stored.
func testCopies(t *testing.T, cp runtime.Checkpointer) {
	c := rich("t", "")
	want := clone(t, c)
	put(t, cp, c)
	c.Next[0].Node, c.Pending[0].ID, c.Step = "changed", "changed", 99
	got := get(t, cp, "t", "")
	sameCheckpoint(t, want, got)
	got.Next[1].Key, got.Pending[1].Key = "changed", "changed"
	got.Next = append(got.Next, checkpoint.TaskRef{Node: "x", Key: "x"})
	sameCheckpoint(t, want, get(t, cp, "t", ""))
}

// clone deep-copies c through JSON.
func clone(t *testing.T, c *runtime.Checkpoint) *runtime.Checkpoint {
	t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out runtime.Checkpoint
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func testDeleteThread(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	a := put(t, cp, mk("gone", "", 0))
	put(t, cp, mk("gone", a.ID, 1))
	keep := put(t, cp, mk("kept", "", 0))
	entries := []checkpoint.JournalEntry{{Key: "s#0", Value: json.RawMessage(`1`)}}
	for _, th := range []string{"gone", "kept"} {
		if err := cp.PutJournal(ctx, th, "task", entries); err != nil {
			t.Fatal(err)
		}
	}
	release, err := leaseFunc(cp.Lease(ctx, "gone", checkpoint.LeaseOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := cp.DeleteThread(ctx, "gone"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if _, err := cp.Get(ctx, "gone", ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Get latest after DeleteThread: %v, want ErrNotFound", err)
	}
	if _, err := cp.Get(ctx, "gone", a.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Get by id after DeleteThread: %v, want ErrNotFound", err)
	}
	if got := list(t, cp, "gone", 0); len(got) != 0 {
		t.Errorf("List after DeleteThread = %v, want empty", got)
	}
	if j, err := cp.GetJournal(ctx, "gone", "task"); err != nil || len(j) != 0 {
		t.Errorf("journal after DeleteThread = %v, %v; want none", j, err)
	}
	again, err := leaseFunc(cp.Lease(ctx, "gone", checkpoint.LeaseOptions{}))
	if err != nil {
		t.Fatalf("Lease after DeleteThread: %v, want the lease to be gone with the thread", err)
	}
	release() // the deleted lease's release must not free the new one
	if r, err := leaseFunc(cp.Lease(ctx, "gone", checkpoint.LeaseOptions{})); !errors.Is(err, runtime.ErrThreadBusy) {
		if r != nil {
			r()
		}
		t.Errorf("Lease while the new lease is held, after the old one's release: %v, want ErrThreadBusy", err)
	}
	again()
	sameCheckpoint(t, keep, get(t, cp, "kept", ""))
	if j, err := cp.GetJournal(ctx, "kept", "task"); err != nil {
		t.Fatal(err)
	} else {
		sameJournal(t, "journal of the other thread", entries, j)
	}
	if err := cp.DeleteThread(ctx, "never-existed"); err != nil {
		t.Errorf("DeleteThread of an unknown thread: %v, want nil", err)
	}
	// The thread can start over.
	fresh := put(t, cp, mk("gone", "", 0))
	if d := cmp.Diff([]string{fresh.ID}, list(t, cp, "gone", 0)); d != "" {
		t.Errorf("a re-created thread (-want +got):\n%s", d)
	}
}
