package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
	"github.com/ilmek-go/ilmek/spec"
)

// chatGraph appends a message per superstep and, as the graph that wrote
// testdata/v2.db did, pauses before every tenth.
func chatGraph(t *testing.T) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("chat").Channel("messages", spec.Append).Channel("n", "").
		Node("say", func(ctx *runtime.Ctx, st runtime.Values) (runtime.Values, error) {
			l, _ := st["messages"].([]any)
			if len(l)%10 == 9 {
				if _, err := runtime.Interrupt[string](ctx, "continue?"); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"messages": fmt.Sprintf("message %d", len(l)), "n": len(l) + 1}, nil
		}).
		Edge(spec.Start, "say").Edge("say", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func messages(t *testing.T, c *runtime.Checkpoint) []string {
	t.Helper()
	var st struct {
		Messages []string `json:"messages"`
	}
	if err := json.Unmarshal(c.Channels, &st); err != nil {
		t.Fatalf("checkpoint %s: %q: %v", c.ID, c.Channels, err)
	}
	return st.Messages
}

func rowCount(t *testing.T, s *Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.w.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMigrateVersion2File opens a file written by the release before
// incremental checkpoints (schema version 2, testdata/v2.db: a chat thread
// paused at its tenth message, another thread done, a stored document),
// migrates it in place, answers the pause and continues the thread, whose
// new checkpoints are deltas of the migrated full ones.
func TestMigrateVersion2File(t *testing.T) {
	data, err := os.ReadFile("testdata/v2.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v2.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openT(t, path)
	var v string
	if err := s.w.QueryRow("SELECT value FROM ilmek_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != strconv.Itoa(schemaVersion) {
		t.Fatalf("schema version after Open: %q %v, want %d", v, err, schemaVersion)
	}
	if d, err := s.GetDocument(t.Context(), "sha256:doc"); err != nil || string(d) != `{"name":"chat"}` {
		t.Fatalf("the stored document: %q %v", d, err)
	}
	old, err := s.List(t.Context(), "chat", 0)
	if err != nil || len(old) != 20 {
		t.Fatalf("the chat thread's checkpoints: %d %v, want 20", len(old), err)
	}
	if got := messages(t, old[0]); len(got) != 9 || len(old[0].Pending) != 1 {
		t.Fatalf("the paused checkpoint: %d messages, pending %+v", len(got), old[0].Pending)
	}
	// The migration gave every thread its record: listable, the paused one
	// with its interrupt, the finished one done, ordered by last update.
	page, err := s.ListThreads(t.Context(), checkpoint.ThreadQuery{})
	if err != nil || len(page.Threads) != 2 {
		t.Fatalf("threads of the migrated file: %+v %v, want chat and other", page.Threads, err)
	}
	byID := map[string]checkpoint.ThreadInfo{}
	for _, th := range page.Threads {
		byID[th.ID] = th
	}
	chat, other := byID["chat"], byID["other"]
	if chat.Outcome.Status != runtime.StatusInterrupted || len(chat.Pending) != 1 || chat.Pending[0].ID != old[0].Pending[0].ID || !chat.Updated.Equal(old[0].Created) {
		t.Errorf("the migrated paused thread: %+v; want interrupted on %s, updated %v", chat, old[0].Pending[0].ID, old[0].Created)
	}
	if other.Outcome.Status != runtime.StatusDone || len(other.Pending) != 0 {
		t.Errorf("the migrated finished thread: %+v; want done", other)
	}
	inbox, err := s.ListThreads(t.Context(), checkpoint.ThreadQuery{Status: runtime.StatusInterrupted})
	if err != nil || len(inbox.Threads) != 1 || inbox.Threads[0].ID != "chat" {
		t.Fatalf("the migrated file's interrupted threads: %+v %v, want chat", inbox.Threads, err)
	}
	g := chatGraph(t)
	res, err := g.Thread(s, "chat").Resume(t.Context(), runtime.Answer("yes"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume of the migrated pause: %s %v", res.Status, err)
	}
	for i := 0; i < 5; i++ {
		if _, err := g.Thread(s, "chat").Invoke(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := s.Get(t.Context(), "chat", "")
	if err != nil {
		t.Fatal(err)
	}
	got := messages(t, latest)
	if len(got) != 15 || got[14] != "message 14" {
		t.Fatalf("after the migration the thread holds %q", got)
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints WHERE thread_id = 'chat' AND coalesce(base_id, parent_id) != ''"); n < 10 {
		t.Errorf("%d checkpoints of the continued thread are deltas, want them all", n)
	}
	if c, err := s.Get(t.Context(), "other", ""); err != nil || len(messages(t, c)) != 3 {
		t.Fatalf("the other thread: %v", err)
	}
	done, err := s.ListThreads(t.Context(), checkpoint.ThreadQuery{Status: runtime.StatusDone})
	if err != nil || len(done.Threads) != 2 || done.Threads[0].ID != "chat" || done.Threads[0].Outcome.RunID == "" {
		t.Fatalf("done threads after the runs: %+v %v; want chat (run last, with its run id) then other", done.Threads, err)
	}
}

// TestDeltaRows checks what the file holds: one small row per superstep,
// a full snapshot every Compact.Every, and nothing after DeleteThread.
func TestDeltaRows(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "cp.db"), Compact(checkpoint.Compaction{Every: 8}))
	g, err := runtime.NewBuilder("chat").Channel("messages", spec.Append).
		Node("say", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"messages": "hello"}, nil
		}).
		Edge(spec.Start, "say").Edge("say", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := g.Thread(s, "t").Invoke(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	all := rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints WHERE thread_id = 't'")
	snaps := rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints WHERE thread_id = 't' AND base_id = ''")
	if snaps < all/8 || snaps > all/8+3 {
		t.Errorf("%d full snapshots among %d checkpoints, want one about every 8", snaps, all)
	}
	if n := rowCount(t, s, "SELECT max(depth) FROM ilmek_checkpoints WHERE thread_id = 't'"); n >= 8 {
		t.Errorf("a chain of %d deltas, want fewer than 8", n)
	}
	if n := rowCount(t, s, "SELECT max(length(channels)) FROM ilmek_checkpoints WHERE thread_id = 't' AND coalesce(base_id, parent_id) != ''"); n > 64 {
		t.Errorf("a delta row holds %d bytes, want only the message", n)
	}
	latest, err := s.Get(t.Context(), "t", "")
	if err != nil || len(messages(t, latest)) != 40 {
		t.Fatalf("latest: %v", err)
	}
	if err := s.DeleteThread(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, s, "SELECT count(*) FROM ilmek_checkpoints WHERE thread_id = 't'"); n != 0 {
		t.Errorf("%d checkpoint rows after DeleteThread", n)
	}
}

// TestAdaptiveCompactionRows checks the default, adaptive rule on a thread
// whose state grows (a chat of 3,000-byte messages, checkpointtest.RunChat,
// which also reads every message back): a delta is stored
// while its chain holds fewer bytes than its snapshot (and at least
// checkpoint.MinCompactionBytes), and a snapshot once it would not, so
// snapshots come at growing sizes and none is written early or late.
func TestAdaptiveCompactionRows(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "cp.db"))
	const turns, msgBytes = 150, 3000
	checkpointtest.RunChat(t, s, "t", turns, msgBytes)
	rows, err := s.w.Query("SELECT seq, coalesce(base_id, parent_id) = '', chain_bytes, " + channelsLength +
		" FROM ilmek_checkpoints WHERE thread_id = 't' ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var snaps []int // the sizes of the snapshots, in order
	snap, prevChain := 0, 0
	for rows.Next() {
		var seq, chain, size int
		var full bool
		if err := rows.Scan(&seq, &full, &chain, &size); err != nil {
			t.Fatal(err)
		}
		limit := max(snap, checkpoint.MinCompactionBytes)
		switch {
		case full:
			if len(snaps) > 0 && prevChain+msgBytes < limit {
				t.Errorf("row %d: a snapshot after a chain of %d bytes, early: its limit is %d", seq, prevChain, limit)
			}
			snaps, snap, prevChain = append(snaps, size), size, 0
		case chain >= limit:
			t.Errorf("row %d: a delta whose chain holds %d bytes, at or past its limit %d (snapshot of %d)", seq, chain, limit, snap)
		default:
			prevChain = chain
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(snaps) < 4 || len(snaps) > 6 {
		t.Errorf("snapshots of %v bytes, want 4 to 6 at growing sizes", snaps)
	}
	for i := 2; i < len(snaps); i++ {
		if snaps[i] < snaps[i-1]*3/2 {
			t.Errorf("snapshots of %v bytes: the later ones should about double", snaps)
		}
	}
}

// TestFastDeltaRowsAsSlow writes the same checkpoints to two files, one
// with deltas inserted in one statement (fastDelta) and one without, and
// wants the same rows: deltas of the parent and of another checkpoint,
// of a snapshot and of a delta, small and stored apart, up to snapshots
// due by Every and by Bytes, a delta of a new graph version (whose row
// fastDelta does not add), and a delta whose base is missing refused
// alike.
func TestFastDeltaRowsAsSlow(t *testing.T) {
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	write := func(t *testing.T, slow bool) string {
		s := openT(t, filepath.Join(t.TempDir(), "cp.db"), Compact(checkpoint.Compaction{Every: 6, Bytes: 4000}))
		s.slowDeltas = slow
		ctx := t.Context()
		mk := func(i int, parent string) *runtime.Checkpoint {
			return &runtime.Checkpoint{ID: fmt.Sprintf("c%03d", i), ThreadID: "t", ParentID: parent, PlanID: fmt.Sprintf("c%03d", i),
				Step: i, Created: at.Add(time.Duration(i) * time.Second), Fingerprint: "f", Format: 1}
		}
		first := mk(0, "")
		first.Channels = json.RawMessage(`{"messages":["start"]}`)
		if err := s.Put(ctx, first, nil); err != nil {
			t.Fatal(err)
		}
		prev := first.ID
		for i := 1; i <= 40; i++ {
			cp := mk(i, prev)
			if i >= 20 {
				cp.Fingerprint = "g" // a new graph version: its row is added on the way
			}
			msg := strings.Repeat("x", 10+i*7%90)
			if i%9 == 0 {
				msg = strings.Repeat("y", 700) // stored apart
			}
			base := prev
			if i%11 == 0 && i > 2 {
				base = fmt.Sprintf("c%03d", i-2) // a delta of another checkpoint
			}
			v, _ := json.Marshal([]string{msg})
			d := checkpoint.Delta{Base: base, Writes: []checkpoint.ChannelWrite{{Channel: "messages", Value: v, Append: true}}}
			if err := s.PutDelta(ctx, cp, d, nil); err != nil {
				t.Fatalf("delta %d: %v", i, err)
			}
			prev = cp.ID
		}
		err := s.PutDelta(ctx, mk(99, prev), checkpoint.Delta{Base: "missing"}, nil)
		if !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("a delta of a missing checkpoint: %v, want ErrNotFound", err)
		}
		var b strings.Builder
		rows, err := s.w.Query("SELECT seq, id, parent_id, coalesce(plan_id, '-'), step, created_ns, coalesce(base_id, '-'), snap_seq, depth, chain_bytes, " +
			rowChannels + ", big IS NOT NULL, (SELECT fingerprint FROM ilmek_versions v WHERE v.vid = ilmek_checkpoints.vid)" +
			" FROM ilmek_checkpoints WHERE thread_id = 't' ORDER BY seq")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var seq, step, created, snap, depth, chain int
			var id, parent, plan, base, version string
			var chans []byte
			var big bool
			if err := rows.Scan(&seq, &id, &parent, &plan, &step, &created, &base, &snap, &depth, &chain, &chans, &big, &version); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d %s %s %s %d %d %s %d %d %d %t %s %s\n", seq, id, parent, plan, step, created, base, snap, depth, chain, big, version, chans)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	fast, slow := write(t, false), write(t, true)
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Errorf("rows written by fastDelta differ from deltaArgs' (-slow +fast):\n%s", diff)
	}
	if snaps := strings.Count(fast, " 0 0 0 false f {") + strings.Count(fast, " 0 0 0 true g {"); snaps < 6 || strings.Count(fast, "\n") != 41 || !strings.Contains(fast, " false g [") {
		t.Errorf("want 41 rows with snapshots among them:\n%s", fast)
	}
}
