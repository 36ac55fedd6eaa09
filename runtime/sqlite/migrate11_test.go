package sqlite

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestMigrateVersion10IDIndex migrates a version 10 file, whose index of
// checkpoint ids is keyed (thread_id, id), to version 11, keyed (id,
// thread_id): its checkpoints are found by id as before, an id stays
// unique within its thread and may repeat in another, and the lookups by
// id use the index.
func TestMigrateVersion10IDIndex(t *testing.T) {
	const ins = `INSERT INTO ilmek_checkpoints (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes) VALUES `
	path := fileAtVersion(t, 10,
		"INSERT INTO ilmek_versions (vid, fingerprint, format, migrated_from) VALUES (1, 'sha256:f', 1, '')",
		ins+`('a', 1, 'c1', '', NULL, 0, 1, '{"n":1}', '[]', 'null', 1, '', 0, 0, 0)`,
		ins+`('a', 2, 'c2', 'c1', NULL, 1, 2, '[{"c":"n","v":2}]', '[]', 'null', 1, NULL, 1, 1, 20)`,
		ins+`('b', 1, 'c1', '', NULL, 0, 3, '{"n":7}', '[]', 'null', 1, '', 0, 0, 0)`,
	)
	columns := func(db *sql.DB) []string {
		t.Helper()
		rows, err := db.Query("SELECT name FROM pragma_index_info('ilmek_checkpoints_id') ORDER BY seqno")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		return cols
	}
	before, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := columns(before); !slices.Equal(got, []string{"thread_id", "id"}) {
		t.Fatalf("a version 10 file's id index: %v, want [thread_id id]", got)
	}
	before.Close()

	s := openT(t, path)
	if got := columns(s.w); !slices.Equal(got, []string{"id", "thread_id"}) {
		t.Errorf("the id index after the migration: %v, want [id thread_id]", got)
	}
	ctx := t.Context()
	for _, tc := range []struct{ thread, id, channels string }{
		{"a", "c1", `{"n":1}`},
		{"a", "c2", `{"n":2}`},
		{"b", "c1", `{"n":7}`},
	} {
		c, err := s.Get(ctx, tc.thread, tc.id)
		if err != nil {
			t.Fatalf("Get %s/%s: %v", tc.thread, tc.id, err)
		}
		if string(c.Channels) != tc.channels {
			t.Errorf("Get %s/%s: channels %s, want %s", tc.thread, tc.id, c.Channels, tc.channels)
		}
	}
	// An id repeats in another thread, not in its own.
	cp := func(thread, id, parent string) *checkpoint.Checkpoint {
		return &checkpoint.Checkpoint{ID: id, ParentID: parent, ThreadID: thread, PlanID: id, Step: 2, Fingerprint: "sha256:f", Format: 1}
	}
	if err := s.PutDelta(ctx, cp("b", "c2", "c1"), checkpoint.Delta{Base: "c1", Writes: []checkpoint.ChannelWrite{{Channel: "n", Value: []byte("8")}}}, nil); err != nil {
		t.Fatalf("an id of thread a stored in thread b: %v", err)
	}
	if err := s.PutDelta(ctx, cp("a", "c2", "c1"), checkpoint.Delta{Base: "c1", Writes: []checkpoint.ChannelWrite{{Channel: "n", Value: []byte("9")}}}, nil); err == nil {
		t.Error("a second checkpoint c2 of thread a was stored")
	}
	// The lookups by id use the index.
	for _, q := range []string{qByID, qDeltaBase} {
		var plan strings.Builder
		rows, err := s.w.Query("EXPLAIN QUERY PLAN "+q, "a", "c2")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(detail + "\n")
		}
		rows.Close()
		if !strings.Contains(plan.String(), "ilmek_checkpoints_id") {
			t.Errorf("%.60s… does not use the id index:\n%s", q, plan.String())
		}
	}
}
