package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestMigrateVersion5Checkpoints migrates a version 5 file holding
// snapshots, chains of deltas, a fork, a kept plan and two graph versions
// to version 6 (slim rows), and reads and writes it after.
func TestMigrateVersion5Checkpoints(t *testing.T) {
	// Rows as version 5 wrote them: (id, parent, plan, channels, base,
	// snap, depth), in the order stored.
	const ins = `INSERT INTO ilmek_checkpoints (thread_id, id, parent_id, plan_id, step, created_ns, channels, next, pending,
		fingerprint, format, migrated_from, base_id, snap_id, depth, chain_bytes) VALUES `
	path := fileAtVersion(t, 5,
		ins+`('chat', 'c1', '', 'c1', 0, 1, '{"m":["a"]}', '[{"node":"n","key":"n"}]', 'null', 'sha256:f', 1, '', '', '', 0, 0)`,
		ins+`('other', 'o1', '', 'o1', 0, 2, '{"x":1}', '[]', 'null', '', 0, '', '', '', 0, 0)`,
		ins+`('chat', 'c2', 'c1', 'c2', 1, 3, '[{"c":"m","a":true,"v":["b"]}]', '[{"node":"n","key":"n"}]', 'null', 'sha256:f', 1, '', 'c1', 'c1', 1, 8)`,
		ins+`('chat', 'c3', 'c2', 'c2', 1, 4, '[{"c":"m","a":true,"v":["c"]}]', '[{"node":"n","key":"n"}]', 'null', 'sha256:f', 1, '', 'c2', 'c1', 2, 16)`,
		ins+`('chat', 'f2', 'c1', 'f2', 1, 5, '[{"c":"m","a":true,"v":["fork"]}]', '[]', 'null', 'sha256:g', 1, 'sha256:f', 'c1', 'c1', 1, 11)`,
		ins+`('chat', 'c4', 'c3', 'c4', 2, 6, '{"m":["a","b","c","d"]}', '[{"node":"n","key":"n"}]', 'null', 'sha256:f', 1, '', '', '', 0, 0)`,
		ins+`('chat', 'c5', 'c4', 'c5', 3, 7, '[{"c":"m","a":true,"v":["e"]}]', '[]', 'null', 'sha256:f', 1, '', 'c4', 'c4', 1, 8)`,
	)

	s := openT(t, path)
	ctx := t.Context()
	for _, tc := range []struct {
		thread, id, parent, plan, channels, fingerprint, migratedFrom string
	}{
		{"chat", "c1", "", "c1", `{"m":["a"]}`, "sha256:f", ""},
		{"chat", "c2", "c1", "c2", `{"m":["a","b"]}`, "sha256:f", ""},
		{"chat", "c3", "c2", "c2", `{"m":["a","b","c"]}`, "sha256:f", ""},
		{"chat", "f2", "c1", "f2", `{"m":["a","fork"]}`, "sha256:g", "sha256:f"},
		{"chat", "c4", "c3", "c4", `{"m":["a","b","c","d"]}`, "sha256:f", ""},
		{"chat", "c5", "c4", "c5", `{"m":["a","b","c","d","e"]}`, "sha256:f", ""},
		{"other", "o1", "", "o1", `{"x":1}`, "", ""},
	} {
		c, err := s.Get(ctx, tc.thread, tc.id)
		if err != nil {
			t.Fatalf("Get %s: %v", tc.id, err)
		}
		if c.ParentID != tc.parent || c.PlanID != tc.plan || string(c.Channels) != tc.channels || c.Fingerprint != tc.fingerprint || c.MigratedFrom != tc.migratedFrom {
			t.Errorf("checkpoint %s after the migration: parent %q plan %q channels %s fingerprint %q migrated from %q; want %+v",
				tc.id, c.ParentID, c.PlanID, c.Channels, c.Fingerprint, c.MigratedFrom, tc)
		}
	}
	if c, err := s.Get(ctx, "chat", ""); err != nil || c.ID != "c5" {
		t.Fatalf("latest of chat: %+v %v, want c5", c, err)
	}
	all, err := s.List(ctx, "chat", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range all {
		ids = append(ids, c.ID)
	}
	if want := []string{"c5", "c4", "f2", "c3", "c2", "c1"}; !slices.Equal(ids, want) {
		t.Errorf("List after the migration: %v, want %v", ids, want)
	}
	// A new delta continues the thread after the migrated rows.
	next := &checkpoint.Checkpoint{ID: "c6", ParentID: "c5", ThreadID: "chat", PlanID: "c6", Step: 4, Fingerprint: "sha256:f", Format: 1}
	d := checkpoint.Delta{Base: "c5", Writes: []checkpoint.ChannelWrite{{Channel: "m", Append: true, Value: json.RawMessage(`["f"]`)}}}
	if err := s.PutDelta(ctx, next, d, nil); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Get(ctx, "chat", ""); err != nil || c.ID != "c6" || string(c.Channels) != `{"m":["a","b","c","d","e","f"]}` {
		t.Fatalf("latest after a new delta: %+v %v", c, err)
	}
	var versions int
	if err := s.w.QueryRow("SELECT count(*) FROM ilmek_versions").Scan(&versions); err != nil || versions != 3 {
		t.Errorf("%d graph versions stored (%v), want 3", versions, err)
	}
}

// fileAtVersion makes a file of schema version v (the first v migrations,
// as that version's Store made it) holding the rows that stmts insert, and
// returns its path.
func fileAtVersion(t *testing.T, v int, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	qs := []string{"CREATE TABLE ilmek_meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
		fmt.Sprintf("INSERT INTO ilmek_meta (key, value) VALUES ('schema_version', '%d')", v)}
	for _, m := range ms[:v] {
		qs = append(qs, m.SQL)
	}
	for _, q := range append(qs, stmts...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.200s: %v", q, err)
		}
	}
	return path
}
