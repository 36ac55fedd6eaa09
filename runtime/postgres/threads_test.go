package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestMigrateThreadsFromVersion3: a schema written at version 3 (the
// migrations as committed, and checkpoint rows as that version stored
// them) is migrated on open, and its threads are listable: the paused one
// interrupted with its interrupt, the finished one done, the one with
// planned tasks without an outcome; each updated at its latest checkpoint.
func TestMigrateThreadsFromVersion3(t *testing.T) {
	p := sharedPool(t)
	ctx := context.Background()
	schema := newSchema(t, "v3")
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, q := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".ilmek_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		"SET LOCAL search_path TO " + schema,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for v, name := range []string{"0001_init", "0002_requests", "0003_versions"} {
		sql, err := os.ReadFile(filepath.Join("migrations", name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO ilmek_migrations (version, name) VALUES ($1, $2)", v+1, name); err != nil {
			t.Fatal(err)
		}
	}
	const base = 1_800_000_000_000_000_000
	pending := `[{"id":"ask:interrupt#0","key":"interrupt#0","node":"ask","task_id":"t1","payload":{"q":"ok?"}}]`
	for _, r := range []struct {
		thread, id string
		created    int64
		next, pend string
	}{
		{"paused", "c1", base + 1, `[{"node":"ask","key":"ask"}]`, "null"},
		{"paused", "c2", base + 2, `[{"node":"ask","key":"ask"}]`, pending},
		{"finished", "c3", base + 3, `[]`, "null"},
		{"failed", "c4", base + 4, `[{"node":"a","key":"a"}]`, "null"},
	} {
		if _, err := tx.Exec(ctx, "INSERT INTO ilmek_checkpoints (thread_id, id, step, created_ns, channels, next, pending) VALUES ($1, $2, 1, $3, $4, $5, $6)",
			r.thread, r.id, r.created, []byte(`{}`), []byte(r.next), []byte(r.pend)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s := openStoreOn(t, schema)
	page, err := s.ListThreads(ctx, checkpoint.ThreadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      string
		status  runtime.Status
		updated int64
		pending int
	}{{"failed", "", base + 4, 0}, {"finished", runtime.StatusDone, base + 3, 0}, {"paused", runtime.StatusInterrupted, base + 2, 1}}
	if len(page.Threads) != len(want) {
		t.Fatalf("threads after the migration: %+v, want %d", page.Threads, len(want))
	}
	for i, w := range want {
		got := page.Threads[i]
		if got.ID != w.id || got.Outcome.Status != w.status || !got.Updated.Equal(time.Unix(0, w.updated)) || len(got.Pending) != w.pending {
			t.Errorf("thread %d = %+v; want %s, status %q, updated %d, %d pending", i, got, w.id, w.status, w.updated, w.pending)
		}
	}
	if p := page.Threads[2].Pending; len(p) == 1 && (p[0].ID != "ask:interrupt#0" || string(p[0].Payload) != `{"q":"ok?"}`) {
		t.Errorf("the migrated interrupt: %+v", p[0])
	}
}
