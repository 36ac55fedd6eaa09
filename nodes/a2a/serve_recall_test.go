package a2a_test

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// notFound checks that tasks/get of id answers CodeTaskNotFound.
func notFound(t *testing.T, s *a2a.Server, id string) {
	t.Helper()
	r, err := s.Post(context.Background(), &a2a.Request{JSONRPC: "2.0", ID: 4, Method: "tasks/get", Params: map[string]any{"id": id}})
	if err != nil || r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
		t.Errorf("tasks/get %q: %+v %v, want CodeTaskNotFound", id, r.Error, err)
	}
}

// TestTaskGetAfterARestart: a task the Server's memory does not hold (its
// process restarted; here a new Server on the same store) is read from
// its thread when it is its context's latest task, on a store that keeps
// thread records: an open task shows how its thread went on, and the
// next message continues it under its id. Before, tasks/get answered
// CodeTaskNotFound for every task an earlier process answered, so a
// client polling a task across a deploy never saw it end, and the answer
// to a question asked before the restart came back under a new task id.
func TestTaskGetAfterARestart(t *testing.T) {
	ctx := context.Background()
	t.Run("a question, then its answer", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		var refunds atomic.Int32
		g := deskGraph(t, &refunds)
		task := taskIn(t, sendTo(t, serveCounter(t, g, cp, 0), "", "desk-r1", "refund please"))
		got := getTask(t, serveCounter(t, g, cp, 0), task.ID)
		if got.ID != task.ID || got.ContextID != "desk-r1" || got.Status.State != "input-required" || got.Status.Message == nil ||
			a2a.TextOf(got.Status.Message.Parts) != a2a.TextOf(task.Status.Message.Parts) {
			t.Fatalf("tasks/get after a restart: %+v, want task %s input-required with its question", got, task.ID)
		}
		answered := taskIn(t, sendTo(t, serveCounter(t, g, cp, 0), "", "desk-r1", "Approve"))
		if answered.ID != task.ID || answered.Status.State != "completed" || reply(answered) != "Refunded." || refunds.Load() != 1 {
			t.Fatalf("the answer after a restart: %+v (refunds %d), want task %s completed with \"Refunded.\"", answered, refunds.Load(), task.ID)
		}
		if done := getTask(t, serveCounter(t, g, cp, 0), task.ID); done.Status.State != "completed" || reply(done) != "Refunded." {
			t.Errorf("tasks/get of the answered task after a restart: %+v, want completed", done)
		}
	})
	t.Run("on SQLite, the store closed and opened again", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "desk.db")
		var refunds atomic.Int32
		g := deskGraph(t, &refunds)
		open := func() *sqlite.Store {
			s, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		store := open()
		task := taskIn(t, sendTo(t, serveCounter(t, g, store, 0), "", "desk-s1", "refund please"))
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
		store = open()
		defer store.Close()
		if got := getTask(t, serveCounter(t, g, store, 0), task.ID); got.Status.State != "input-required" {
			t.Fatalf("tasks/get after the store was opened again: %+v, want input-required", got)
		}
		answered := taskIn(t, sendTo(t, serveCounter(t, g, store, 0), "", "desk-s1", "Approve"))
		if answered.ID != task.ID || answered.Status.State != "completed" || refunds.Load() != 1 {
			t.Fatalf("the answer: %+v (refunds %d), want task %s completed", answered, refunds.Load(), task.ID)
		}
		if done := getTask(t, serveCounter(t, g, store, 0), task.ID); done.Status.State != "completed" || reply(done) != "Refunded." {
			t.Errorf("tasks/get of the answered task: %+v, want completed", done)
		}
	})
	t.Run("working on a timer, then woken", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		g := napper(t, 100*time.Millisecond)
		task := taskIn(t, sendTo(t, serveCounter(t, g, cp, 0), "", "nap-r1", "rest"))
		if got := getTask(t, serveCounter(t, g, cp, 0), task.ID); got.Status.State != "working" {
			t.Fatalf("tasks/get after a restart: %q, want working", got.Status.State)
		}
		if res, err := wakeWhenDue(t, g.Thread(cp, "nap-r1")); err != nil || res.Status != runtime.StatusDone {
			t.Fatalf("wake: %q %v", res.Status, err)
		}
		if done := getTask(t, serveCounter(t, g, cp, 0), task.ID); done.ID != task.ID || done.Status.State != "completed" || reply(done) != "rested" {
			t.Errorf("tasks/get after the wake, in a new process: %+v, want task %s completed with \"rested\"", done, task.ID)
		}
	})
	t.Run("only the context's latest task", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		var refunds atomic.Int32
		g := deskGraph(t, &refunds)
		s := serveCounter(t, g, cp, 0)
		older := taskIn(t, sendTo(t, s, "", "desk-r2", "where is my order?"))
		latest := taskIn(t, sendTo(t, s, "", "desk-r2", "where is my order?"))
		restarted := serveCounter(t, g, cp, 0)
		if got := getTask(t, restarted, latest.ID); got.Status.State != "completed" || reply(got) != reply(latest) {
			t.Errorf("tasks/get of the latest task: %+v, want completed", got)
		}
		notFound(t, restarted, older.ID)
		// An id that names the context but is not its task, and ids that
		// name no context, find nothing.
		mint, _, _ := strings.Cut(latest.ID, ".")
		for _, id := range []string{
			"0000000000000000." + base64.RawURLEncoding.EncodeToString([]byte("desk-r2")),
			mint + "." + base64.RawURLEncoding.EncodeToString([]byte("desk-none")),
			mint, mint + ".", mint + ".!!", "",
		} {
			notFound(t, restarted, id)
		}
	})
	t.Run("a thread deleted", func(t *testing.T) {
		cp := checkpoint.NewMemory()
		var refunds atomic.Int32
		g := deskGraph(t, &refunds)
		task := taskIn(t, sendTo(t, serveCounter(t, g, cp, 0), "", "desk-r3", "refund please"))
		if err := cp.DeleteThread(ctx, "desk-r3"); err != nil {
			t.Fatal(err)
		}
		notFound(t, serveCounter(t, g, cp, 0), task.ID)
	})
	t.Run("on a store without thread records", func(t *testing.T) {
		cp := plainStore{checkpoint.NewMemory()}
		var refunds atomic.Int32
		g := deskGraph(t, &refunds)
		task := taskIn(t, sendTo(t, serveCounter(t, g, cp, 0), "", "desk-r4", "refund please"))
		notFound(t, serveCounter(t, g, cp, 0), task.ID)
		answered := taskIn(t, sendTo(t, serveCounter(t, g, cp, 0), "", "desk-r4", "Approve"))
		if answered.ID == task.ID || answered.Status.State != "completed" {
			t.Errorf("the answer after a restart: %+v, want completed under a new task (nothing records the first)", answered)
		}
	})
}
