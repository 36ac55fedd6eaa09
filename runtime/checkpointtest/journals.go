package checkpointtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var journalContracts = []contract{
	{"JournalPutGetReplace", testJournalPutGetReplace},
	{"JournalsAreKeyedByThreadAndTask", testJournalKeys},
	{"PutDropsDoneJournals", testPutDropsDone},
	{"PutDropsJournalsAtomically", testPutAtomic},
}

func putJournal(t *testing.T, cp runtime.Checkpointer, thread, task string, entries []checkpoint.JournalEntry) {
	t.Helper()
	if err := cp.PutJournal(t.Context(), thread, task, entries); err != nil {
		t.Fatalf("PutJournal(%q, %q): %v", thread, task, err)
	}
}

func getJournal(t *testing.T, cp runtime.Checkpointer, thread, task string) []checkpoint.JournalEntry {
	t.Helper()
	j, err := cp.GetJournal(t.Context(), thread, task)
	if err != nil {
		t.Fatalf("GetJournal(%q, %q): %v", thread, task, err)
	}
	return j
}

// journal returns n step entries whose values name tag.
func journal(tag string, n int) []checkpoint.JournalEntry {
	out := make([]checkpoint.JournalEntry, n)
	for i := range out {
		out[i] = checkpoint.JournalEntry{Key: fmt.Sprintf("step#%d", i), Value: json.RawMessage(fmt.Sprintf(`{"tag":%q,"i":%d}`, tag, i))}
	}
	return out
}

func testJournalPutGetReplace(t *testing.T, cp runtime.Checkpointer) {
	if j := getJournal(t, cp, "t", "task"); len(j) != 0 {
		t.Fatalf("journal of a task that never wrote one = %+v, want none", j)
	}
	all := []checkpoint.JournalEntry{
		{Key: "charge#0", Value: json.RawMessage(`{"receipt":"r-1","amount":12.5}`)},
		{Key: "interrupt#0", Interrupt: true, Payload: json.RawMessage(`{"question":"ok?"}`)},
		{Key: "approve:x#0", Interrupt: true, Payload: json.RawMessage(`"q"`), Value: json.RawMessage(`"yes"`), Answered: true},
		{Key: "nothing#0", Value: json.RawMessage(`null`)},
		{Key: "unicode#0", Value: json.RawMessage(`"é \u2028 😀 <&>"`)},
	}
	tests := []struct {
		name    string
		entries []checkpoint.JournalEntry
	}{
		{"one step", all[:1]},
		{"grown", all[:3]},
		{"every kind of entry", all},
		{"replaced by a shorter one", all[2:3]},
	}
	for _, tc := range tests {
		putJournal(t, cp, "t", "task", tc.entries)
		sameJournal(t, "journal "+tc.name, tc.entries, getJournal(t, cp, "t", "task"))
	}
	// What GetJournal returns belongs to the caller.
	got := getJournal(t, cp, "t", "task")
	got[0].Key, got[0].Value = "changed", json.RawMessage(`0`)
	sameJournal(t, "journal after the caller changed its copy", all[2:3], getJournal(t, cp, "t", "task"))
}

func testJournalKeys(t *testing.T, cp runtime.Checkpointer) {
	keys := []struct{ thread, task string }{
		{"t1", "plan:a"}, {"t1", "plan:b"}, {"t2", "plan:a"}, {"t1", "plan:a#0"}, {"t1:plan", "a"},
	}
	for i, k := range keys {
		putJournal(t, cp, k.thread, k.task, journal(k.thread+"/"+k.task, i+1))
	}
	for i, k := range keys {
		sameJournal(t, fmt.Sprintf("journal %s/%s", k.thread, k.task), journal(k.thread+"/"+k.task, i+1), getJournal(t, cp, k.thread, k.task))
	}
}

func testPutDropsDone(t *testing.T, cp runtime.Checkpointer) {
	for _, task := range []string{"p:a", "p:b", "p:c"} {
		putJournal(t, cp, "t", task, journal(task, 2))
	}
	putJournal(t, cp, "other", "p:a", journal("other", 1))
	c := put(t, cp, mk("t", "", 1), "p:a", "p:b", "p:never-written")
	sameCheckpoint(t, c, get(t, cp, "t", ""))
	for _, task := range []string{"p:a", "p:b"} {
		if j := getJournal(t, cp, "t", task); len(j) != 0 {
			t.Errorf("journal of done task %s survived the Put that committed it: %+v", task, j)
		}
	}
	sameJournal(t, "journal of a task not in done", journal("p:c", 2), getJournal(t, cp, "t", "p:c"))
	sameJournal(t, "journal of the same task id in another thread", journal("other", 1), getJournal(t, cp, "other", "p:a"))
	// A Put with nothing done keeps every journal (an interrupt's checkpoint).
	put(t, cp, mk("t", c.ID, 2))
	sameJournal(t, "journal after a Put with no done tasks", journal("p:c", 2), getJournal(t, cp, "t", "p:c"))
}

// testPutAtomic watches a series of Puts from other goroutines: whenever a
// done task's journal has disappeared, the checkpoint that dropped it must
// already be visible. A backend that drops journals before (or without)
// storing the checkpoint loses completed steps in a crash.
func testPutAtomic(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	const rounds, observers = 100, 2
	cps := make([]*runtime.Checkpoint, rounds)
	prev := ""
	for i := range cps {
		cps[i] = mk("t", prev, i)
		prev = cps[i].ID
	}
	var cur atomic.Int64 // the round the writer is in
	cur.Store(-1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, observers)
	for range observers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(cur.Load())
				if i < 0 {
					continue
				}
				task := fmt.Sprintf("task-%d", i)
				// Read in the writer's order reversed: "started" is
				// written after the task's journal, so once it is seen,
				// a missing task journal was dropped by the Put.
				started, err := cp.GetJournal(ctx, "t", "started-"+task)
				if err != nil || len(started) == 0 {
					continue
				}
				j, err := cp.GetJournal(ctx, "t", task)
				if err != nil || len(j) != 0 {
					continue // not dropped yet
				}
				if _, err := cp.Get(ctx, "t", cps[i].ID); errors.Is(err, runtime.ErrNotFound) {
					errs <- fmt.Errorf("the journal of %s was dropped but checkpoint %s, whose Put dropped it, is not stored", task, cps[i].ID)
					return
				}
			}
		}()
	}
	for i := range rounds {
		task := fmt.Sprintf("task-%d", i)
		cur.Store(int64(i))
		putJournal(t, cp, "t", task, journal(task, 1))
		putJournal(t, cp, "t", "started-"+task, journal(task, 1))
		put(t, cp, cps[i], task)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range rounds {
		if j := getJournal(t, cp, "t", fmt.Sprintf("task-%d", i)); len(j) != 0 {
			t.Fatalf("journal of task-%d survived its Put", i)
		}
	}
}
