package sqlite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestMigrateVersion6LargeChannels migrates a version 6 file whose
// snapshots and one delta hold channels larger than bigChannels in their
// rows, beside small ones, to version 7 (large channels stored apart), and
// reads, writes, prunes and deletes after.
func TestMigrateVersion6LargeChannels(t *testing.T) {
	big := func(tag string, n int) string { return fmt.Sprintf(`{"m":[%q]}`, tag+strings.Repeat("x", n)) }
	bigWrite := fmt.Sprintf(`[{"c":"m","a":true,"v":[%q]}]`, "d"+strings.Repeat("y", 900))
	// Rows as version 6 writes them: (seq, id, parent, channels, base,
	// snap_seq, depth).
	const ins = `INSERT INTO ilmek_checkpoints (thread_id, seq, id, parent_id, plan_id, step, created_ns, channels, next, pending, vid, base_id, snap_seq, depth, chain_bytes) VALUES `
	path := fileAtVersion(t, 6,
		"INSERT INTO ilmek_versions (vid, fingerprint, format, migrated_from) VALUES (1, 'sha256:f', 1, '')",
		ins+fmt.Sprintf(`('chat', 1, 'c1', '', NULL, 0, 1, '%s', '[]', 'null', 1, '', 0, 0, 0)`, big("a", 2000)),
		ins+`('chat', 2, 'c2', 'c1', NULL, 1, 2, '[{"c":"m","a":true,"v":["b"]}]', '[]', 'null', 1, NULL, 1, 1, 30)`,
		ins+fmt.Sprintf(`('chat', 3, 'c3', 'c2', NULL, 2, 3, '%s', '[]', 'null', 1, NULL, 1, 2, 950)`, bigWrite),
		ins+`('small', 1, 's1', '', NULL, 0, 4, '{"m":["tiny"]}', '[]', 'null', 1, '', 0, 0, 0)`,
		ins+fmt.Sprintf(`('other', 1, 'o1', '', NULL, 0, 5, '%s', '[]', 'null', 1, '', 0, 0, 0)`, big("o", 800)),
	)

	s := openT(t, path)
	ctx := t.Context()
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_channels"); n != 3 {
		t.Errorf("%d channels stored apart after the migration, want 3 (two snapshots and the large delta)", n)
	}
	if n := rowCount(t, s, fmt.Sprintf("SELECT count(*) FROM ilmek_checkpoints WHERE length(channels) > %d", bigChannels)); n != 0 {
		t.Errorf("%d rows still hold large channels", n)
	}
	full2 := `{"m":["a` + strings.Repeat("x", 2000) + `","b"]}`
	full3 := `{"m":["a` + strings.Repeat("x", 2000) + `","b","d` + strings.Repeat("y", 900) + `"]}`
	for _, tc := range []struct{ thread, id, channels string }{
		{"chat", "c1", big("a", 2000)},
		{"chat", "c2", full2},
		{"chat", "c3", full3},
		{"small", "s1", `{"m":["tiny"]}`},
		{"other", "o1", big("o", 800)},
	} {
		c, err := s.Get(ctx, tc.thread, tc.id)
		if err != nil {
			t.Fatalf("Get %s: %v", tc.id, err)
		}
		if string(c.Channels) != tc.channels {
			t.Errorf("checkpoint %s after the migration: channels of %d bytes, want %d", tc.id, len(c.Channels), len(tc.channels))
		}
	}
	next := &checkpoint.Checkpoint{ID: "c4", ParentID: "c3", ThreadID: "chat", PlanID: "c4", Step: 3, Fingerprint: "sha256:f", Format: 1}
	d := checkpoint.Delta{Base: "c3", Writes: []checkpoint.ChannelWrite{{Channel: "m", Append: true, Value: json.RawMessage(`["e"]`)}}}
	if err := s.PutDelta(ctx, next, d, nil); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Get(ctx, "chat", ""); err != nil || c.ID != "c4" || string(c.Channels) != strings.TrimSuffix(full3, `]}`)+`,"e"]}` {
		t.Fatalf("latest after a new delta: %v %v", c, err)
	}
	// Pruning to the last two rewrites c3 in full: its large delta goes,
	// its full channels are stored apart, and c1's with c1.
	if _, err := s.Prune(ctx, "chat", checkpoint.PruneOptions{KeepLast: 2}); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_channels"); n != 2 {
		t.Errorf("%d channels stored apart after the prune, want 2 (c3's in full and o1's)", n)
	}
	if c, err := s.Get(ctx, "chat", "c3"); err != nil || string(c.Channels) != full3 {
		t.Fatalf("c3 after the prune: %v", err)
	}
	if err := s.DeleteThread(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_channels"); n != 1 {
		t.Errorf("%d channels stored apart after deleting the thread, want 1 (o1's)", n)
	}
}

// TestCommitTriedAgainFromScratch runs the body of a commit twice, the
// first transaction rolled back, as a group commit whose batch failed to
// commit tries each write again alone: a compacting delta and channels
// stored apart are written as on a first try. Before each try restarted
// from what was encoded, the second try of a compaction read the first
// try's full channels as the delta's writes and failed.
func TestCommitTriedAgainFromScratch(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "retry.db"), Compact(checkpoint.Compaction{Every: 2}))
	ctx := t.Context()
	base := &checkpoint.Checkpoint{ID: "c0", ThreadID: "t", PlanID: "c0", Channels: json.RawMessage(`{"m":["a"]}`)}
	if err := s.Put(ctx, base, nil); err != nil {
		t.Fatal(err)
	}
	long := fmt.Sprintf("%q", strings.Repeat("z", 600))
	want := `{"m":["a"`
	prev := "c0"
	for i, v := range []string{`"b"`, long, `"c"`, `"d"`} {
		id := fmt.Sprintf("c%d", i+1)
		c := &checkpoint.Checkpoint{ID: id, ParentID: prev, ThreadID: "t", PlanID: id, Step: i + 1}
		d := checkpoint.Delta{Base: prev, Writes: []checkpoint.ChannelWrite{{Channel: "m", Append: true, Value: json.RawMessage("[" + v + "]")}}}
		put, _, err := s.prepareCommit(c, &d, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for try := range 2 {
			tx, err := s.w.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := put(ctx, tx); err != nil {
				tx.Rollback()
				t.Fatalf("%s, try %d: %v", id, try+1, err)
			}
			if try == 0 {
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
			} else if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		want += "," + v
		s.cache.forget("t")
		got, err := s.Get(ctx, "t", id)
		if err != nil || string(got.Channels) != want+"]}" {
			t.Fatalf("%s after a second try: %v, channels of %d bytes; want %d", id, err, len(got.Channels), len(want)+2)
		}
		prev = id
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints WHERE base_id = ''"); n < 2 {
		t.Errorf("%d snapshots, want a compaction among the deltas (Every: 2)", n)
	}
}
