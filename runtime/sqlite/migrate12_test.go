package sqlite

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestMigrateVersion11CommitOrder migrates a version 11 file, whose
// checkpoints table is clustered by (thread_id, seq), to version 12, whose
// rows are in commit order and found through the index on (thread_id,
// seq): every checkpoint reads as before, a snapshot's channels kept in
// ilmek_channels stay, seq numbers go on from where they were, and the
// triggers the rebuilt table needs are back (a deleted checkpoint's
// channels go with it; a new checkpoint touches its thread).
func TestMigrateVersion11CommitOrder(t *testing.T) {
	big := strings.Repeat("x", 600)
	const ins = `INSERT INTO ilmek_checkpoints (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes, big) VALUES `
	path := fileAtVersion(t, 11,
		"INSERT INTO ilmek_versions (vid, fingerprint, format, migrated_from) VALUES (1, 'sha256:f', 1, '')",
		`INSERT INTO ilmek_channels (rid, data) VALUES (7, '{"n":1,"s":"`+big+`"}')`,
		ins+`('a', 1, 'c1', '', NULL, 0, 1, NULL, '[]', 'null', 1, '', 0, 0, 0, 7)`,
		ins+`('a', 2, 'c2', 'c1', NULL, 1, 2, '[{"c":"n","v":2}]', '[]', 'null', 1, NULL, 1, 1, 20, NULL)`,
		ins+`('b', 1, 'c1', '', NULL, 0, 3, '{"n":7}', '[]', 'null', 1, '', 0, 0, 0, NULL)`,
	)
	s := openT(t, path)
	ctx := t.Context()
	for _, tc := range []struct{ thread, id, channels string }{
		{"a", "c1", `{"n":1,"s":"` + big + `"}`},
		{"a", "c2", `{"n":2,"s":"` + big + `"}`},
		{"b", "c1", `{"n":7}`},
	} {
		c, err := s.Get(ctx, tc.thread, tc.id)
		if err != nil {
			t.Fatalf("Get %s/%s: %v", tc.thread, tc.id, err)
		}
		if string(c.Channels) != tc.channels {
			t.Errorf("Get %s/%s: channels %.80s, want %.80s", tc.thread, tc.id, c.Channels, tc.channels)
		}
	}
	if c, err := s.Get(ctx, "a", ""); err != nil || c.ID != "c2" {
		t.Fatalf("thread a's latest: %v, %v; want c2", c, err)
	}
	cp := &checkpoint.Checkpoint{ID: "c3", ParentID: "c2", ThreadID: "a", PlanID: "c3", Step: 2, Fingerprint: "sha256:f", Format: 1, Created: time.Unix(1, 0).UTC()}
	if err := s.PutDelta(ctx, cp, checkpoint.Delta{Base: "c2", Writes: []checkpoint.ChannelWrite{{Channel: "n", Value: []byte("3")}}}, nil); err != nil {
		t.Fatal(err)
	}
	var seq, rid int64
	if err := s.w.QueryRow("SELECT seq, rid FROM ilmek_checkpoints WHERE thread_id = 'a' AND id = 'c3'").Scan(&seq, &rid); err != nil {
		t.Fatal(err)
	}
	if seq != 3 || rid != 4 {
		t.Errorf("the new checkpoint: seq %d, rid %d; want seq 3 (after the thread's), rid 4 (after every row)", seq, rid)
	}
	var touched int64
	if err := s.w.QueryRow("SELECT updated_ns FROM ilmek_threads WHERE thread_id = 'a'").Scan(&touched); err != nil || touched != 1e9 {
		t.Errorf("thread a's updated_ns %d (%v); want the new checkpoint's time: the touch trigger is back", touched, err)
	}
	// Deleting the thread deletes the channels its snapshot kept apart.
	if err := s.DeleteThread(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.w.QueryRow("SELECT count(*) FROM ilmek_channels").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows of ilmek_channels after thread a was deleted (%v); want 0: the drop trigger is back", n, err)
	}
}

// TestCheckpointStatementsUseIndexes: no statement that reads the
// checkpoints table scans it; each finds its rows through the index on
// (thread_id, seq) or on (id, thread_id). With the rows in commit order a
// scan would read every thread's.
func TestCheckpointStatementsUseIndexes(t *testing.T) {
	s := openT(t, t.TempDir()+"/plans.db")
	for _, q := range []string{qLatest, qByID, qList, qChain, qDeltaBase, qSnapBytes, qInsertCheckpoint, qInsertDelta, qInsertDeltaFenced, pruneRead, pruneEvents} {
		plan := queryPlan(t, s.w, q)
		for _, line := range strings.Split(plan, "\n") {
			if strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, "USING") && strings.Contains(line, "ilmek_checkpoints") ||
				strings.HasPrefix(line, "SCAN c") && !strings.Contains(line, "USING") {
				t.Errorf("%.70s… scans the checkpoints table:\n%s", q, plan)
			}
		}
	}
}

// queryPlan returns the detail lines of q's EXPLAIN QUERY PLAN, its
// parameters bound to "".
func queryPlan(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	// Numbered parameters (?1, ?2) count to the highest; plain ones one by one.
	n := 0
	for _, m := range regexp.MustCompile(`\?(\d+)`).FindAllStringSubmatch(q, -1) {
		k, _ := strconv.Atoi(m[1])
		n = max(n, k)
	}
	if n == 0 {
		n = strings.Count(q, "?")
	}
	args := make([]any, n)
	for i := range args {
		args[i] = ""
	}
	rows, err := db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%.70s…: %v", q, err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	return plan.String()
}
