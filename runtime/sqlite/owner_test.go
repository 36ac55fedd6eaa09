package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// fillOwners stores n threads, thread i owned by owners[i%len(owners)],
// in one transaction.
func fillOwners(tb testing.TB, s *Store, n int, owners ...string) {
	tb.Helper()
	tx, err := s.w.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	for i := range n {
		meta := fmt.Sprintf(`{"owner":%q,"team":"t%d"}`, owners[i%len(owners)], i%2)
		if _, err := tx.Exec("INSERT INTO ilmek_threads (thread_id, meta, updated_ns) VALUES (?, ?, ?)", fmt.Sprintf("th-%06d", i), meta, i+1); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// TestListByOwner: a listing by owner (the indexed key, alone or with
// other keys) returns exactly that owner's threads, newest first, across
// pages, and the statement ListThreads writes for it reads the owner
// index.
func TestListByOwner(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "owners.db"))
	fillOwners(t, s, 30, "alice", "bob", "carol")
	for _, tc := range []struct {
		name string
		meta map[string]string
		want int
	}{
		{"owner", map[string]string{"owner": "bob"}, 10},
		{"owner and team", map[string]string{"owner": "bob", "team": "t0"}, 5},
		{"no such owner", map[string]string{"owner": "dave"}, 0},
		{"team only", map[string]string{"team": "t1"}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []checkpoint.ThreadInfo
			q := checkpoint.ThreadQuery{Meta: tc.meta, Limit: 4}
			for {
				page, err := s.ListThreads(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page.Threads...)
				if page.Next == "" {
					break
				}
				q.Cursor = page.Next
			}
			if len(got) != tc.want {
				t.Fatalf("%d threads, want %d", len(got), tc.want)
			}
			for i, th := range got {
				for k, v := range tc.meta {
					if th.Meta[k] != v {
						t.Errorf("thread %s has %s=%q, want %q", th.ID, k, th.Meta[k], v)
					}
				}
				if i > 0 && !got[i-1].Updated.After(th.Updated) {
					t.Errorf("thread %s not older than %s", th.ID, got[i-1].ID)
				}
			}
		})
	}
	var detail, plan string
	rows, err := s.r.Query("EXPLAIN QUERY PLAN SELECT "+threadColumns+" FROM ilmek_threads t WHERE true AND json_extract(meta, '$.owner') = ?1"+
		" AND EXISTS (SELECT 1 FROM json_each(t.meta) j WHERE j.key = ?2 AND j.type = 'text' AND j.value = ?1) ORDER BY updated_ns DESC, thread_id DESC LIMIT ?3", "bob", "owner", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan += detail + "; "
	}
	if want := "INDEX ilmek_threads_owner"; !strings.Contains(plan, want) {
		t.Errorf("plan %q does not say %q", plan, want)
	}
}

// BenchmarkListOtherOwner lists the threads of an owner who has none in a
// store of 10,000 threads of another owner: with the owner index
// (migration 4), without it (the listing before it), and on an empty
// store for scale.
func BenchmarkListOtherOwner(b *testing.B) {
	for _, tc := range []struct {
		name    string
		threads int
		drop    bool
	}{
		{"indexed", 10000, false},
		{"no-index", 10000, true},
		{"empty", 0, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "owners.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			fillOwners(b, s, tc.threads, "alice")
			if tc.drop {
				if _, err := s.w.Exec("DROP INDEX ilmek_threads_owner"); err != nil {
					b.Fatal(err)
				}
			}
			q := checkpoint.ThreadQuery{Meta: map[string]string{"owner": "bob"}}
			for b.Loop() {
				page, err := s.ListThreads(b.Context(), q)
				if err != nil || len(page.Threads) != 0 {
					b.Fatal(len(page.Threads), err)
				}
			}
		})
	}
}
