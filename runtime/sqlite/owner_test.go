package sqlite

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
)

// fillOwners stores n threads in one transaction, thread i owned by
// storetest.OwnerOf(i) in team storetest.TeamOf(i), or all by owner when
// it is not "".
func fillOwners(tb testing.TB, s *Store, n int, owner string) {
	tb.Helper()
	tx, err := s.w.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	for i := range n {
		meta := fmt.Sprintf(`{"owner":%q,"team":%q}`, cmp.Or(owner, storetest.OwnerOf(i)), storetest.TeamOf(i))
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
	fillOwners(t, s, 30, "")
	storetest.ListByOwner(t, s, 30, 4)
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

// BenchmarkListOtherOwner is storetest.ListOtherOwner: the owner index is
// migration 4.
func BenchmarkListOtherOwner(b *testing.B) {
	storetest.ListOtherOwner(b, func(b *testing.B, threads int, drop bool) checkpoint.ThreadLister {
		s, err := Open(filepath.Join(b.TempDir(), "owners.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		fillOwners(b, s, threads, "alice")
		if drop {
			if _, err := s.w.Exec("DROP INDEX ilmek_threads_owner"); err != nil {
				b.Fatal(err)
			}
		}
		return s
	})
}

// TestThreadTouch: a checkpoint rewrites its thread's row (Updated) only
// when the row is a grain older (migration 9), and a run's end leaves
// Updated no earlier than its last checkpoint.
func TestThreadTouch(t *testing.T) {
	storetest.Touch(t, openT(t, filepath.Join(t.TempDir(), "touch.db")))
}
