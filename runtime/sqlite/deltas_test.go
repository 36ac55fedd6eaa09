package sqlite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
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
