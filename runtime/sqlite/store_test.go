package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

func openT(t *testing.T, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func cp(thread, id string) *runtime.Checkpoint {
	return &runtime.Checkpoint{ID: id, ThreadID: thread, PlanID: id, Channels: json.RawMessage(`{}`), Created: time.Now()}
}

func TestOpenConfiguresTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "odd ?name#1%.db")
	s := openT(t, path)
	if err := s.Put(t.Context(), cp("t", "1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at the path it was opened with: %v", err)
	}
	tests := []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"busy_timeout", "5000"},
		{"synchronous", "2"}, // FULL
	}
	for _, tc := range tests {
		var got string
		if err := s.w.QueryRow("PRAGMA " + tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
		}
	}
	var readOnly int
	if err := s.r.QueryRow("PRAGMA query_only").Scan(&readOnly); err != nil || readOnly != 1 {
		t.Errorf("read connections: query_only = %d (%v), want 1", readOnly, err)
	}
	// Opening again finds the schema; a file shared with an application's
	// own tables is fine.
	if _, err := s.w.Exec("CREATE TABLE app_orders (id TEXT)"); err != nil {
		t.Fatal(err)
	}
	again := openT(t, path, Synchronous("NORMAL"), BusyTimeout(time.Second))
	if got, err := again.Get(t.Context(), "t", ""); err != nil || got.ID != "1" {
		t.Fatalf("reopened store: %v %v", got, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	s := openT(t, newer)
	if _, err := s.w.Exec("UPDATE ilmek_meta SET value = '99' WHERE key = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("these are not the pages you are looking for, not at all, really"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		opts       []Option
		want       string
	}{
		{"empty path", "", nil, "empty path"},
		{"sync mode", filepath.Join(dir, "a.db"), []Option{Synchronous("fast")}, `Synchronous("fast")`},
		{"ttl", filepath.Join(dir, "a.db"), []Option{LeaseTTL(time.Millisecond)}, "LeaseTTL(1ms) is too short"},
		{"busy", filepath.Join(dir, "a.db"), []Option{BusyTimeout(-1)}, "BusyTimeout"},
		{"schema version", newer, nil, "schema version 99 but this build knows version " + strconv.Itoa(schemaVersion)},
		{"directory", filepath.Join(dir, "missing", "x.db"), nil, "missing does not exist; create it first"},
		{"not a database", notDB, nil, "is it an SQLite file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.path, tc.opts...)
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestPutIsAtomic makes the checkpoint insert fail (a duplicate id) and
// checks that the journals it would have dropped are still there.
func TestPutIsAtomic(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "a.db"))
	ctx := t.Context()
	entries := []checkpoint.JournalEntry{{Key: "charge#0", Value: json.RawMessage(`"r-1"`)}}
	if err := s.Put(ctx, cp("t", "1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJournal(ctx, "t", "1:a", entries); err != nil {
		t.Fatal(err)
	}
	err := s.Put(ctx, cp("t", "1"), []string{"1:a"})
	if err == nil || !strings.Contains(err.Error(), `put checkpoint 1 of thread "t"`) {
		t.Fatalf("Put of a duplicate id: %v, want an error naming the checkpoint", err)
	}
	if j, err := s.GetJournal(ctx, "t", "1:a"); err != nil || len(j) != 1 {
		t.Fatalf("a failed Put dropped the journal: %v %v", j, err)
	}
	cps, _ := s.List(ctx, "t", 0)
	if len(cps) != 1 {
		t.Fatalf("a failed Put left %d checkpoints, want 1", len(cps))
	}
}

// expire makes the thread's lease row look expired, as if its holder had
// stopped renewing it long ago.
func expire(t *testing.T, s *Store, thread string) {
	t.Helper()
	if _, err := s.w.Exec("UPDATE ilmek_leases SET expires_ns = 0 WHERE thread_id = ?", thread); err != nil {
		t.Fatal(err)
	}
}

// TestLostLeaseFencesWrites: a Store whose lease expired and was taken over
// by another Store can no longer write the thread, and its release does not
// free the new holder's lease.
func TestLostLeaseFencesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	old, cur := openT(t, path), openT(t, path)
	ctx := t.Context()
	leaseOld, err := old.Lease(ctx, "t", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := leaseOld.Commit(ctx, checkpoint.Commit{Checkpoint: cp("t", "1")}); err != nil {
		t.Fatalf("Put while holding the lease: %v", err)
	}
	if _, err := cur.Lease(ctx, "t", checkpoint.LeaseOptions{}); !errors.Is(err, runtime.ErrThreadBusy) {
		t.Fatalf("Lease from a second store: %v, want ErrThreadBusy", err)
	}
	expire(t, old, "t")
	leaseCur, err := cur.Lease(ctx, "t", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatalf("taking over an expired lease: %v", err)
	}
	defer leaseCur.Release()
	if leaseCur.Fence() == leaseOld.Fence() {
		t.Errorf("both leases have the fencing token %q", leaseCur.Fence())
	}
	if err := leaseOld.Commit(ctx, checkpoint.Commit{Checkpoint: cp("t", "2")}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Put by the old holder: %v, want ErrLeaseLost", err)
	}
	if err := leaseOld.PutJournal(ctx, "1:a", nil); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("PutJournal by the old holder: %v, want ErrLeaseLost", err)
	}
	if err := leaseCur.Commit(ctx, checkpoint.Commit{Checkpoint: cp("t", "3")}); err != nil {
		t.Errorf("Put by the new holder: %v", err)
	}
	leaseOld.Release()
	if _, err := old.Lease(ctx, "t", checkpoint.LeaseOptions{}); !errors.Is(err, runtime.ErrThreadBusy) {
		t.Errorf("after the old holder's release, Lease = %v; want ErrThreadBusy (the new holder keeps it)", err)
	}
	if cps, _ := cur.List(ctx, "t", 0); len(cps) != 2 {
		t.Errorf("thread has %d checkpoints, want 2 (the old holder's late Put refused)", len(cps))
	}
}

// TestHeartbeatRenewsLease holds a lease for several TTLs: the heartbeat
// pushes its expiry forward, so another Store cannot take it; after release
// it is free at once.
func TestHeartbeatRenewsLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	const ttl = 200 * time.Millisecond
	holder, other := openT(t, path, LeaseTTL(ttl)), openT(t, path, LeaseTTL(ttl))
	taken := time.Now()
	release, err := leaseFunc(holder.Lease(t.Context(), "t", checkpoint.LeaseOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	expiry := func() int64 {
		var ns int64
		if err := holder.w.QueryRow("SELECT expires_ns FROM ilmek_leases WHERE thread_id = 't'").Scan(&ns); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	first, renewals := expiry(), 0
	for last := first; renewals < 3; time.Sleep(ttl / 10) {
		if time.Since(taken) > 20*ttl {
			t.Fatalf("the lease was renewed %d times in %v, want 3 (every TTL/3 = %v)", renewals, 20*ttl, ttl/3)
		}
		if ns := expiry(); ns > last {
			renewals, last = renewals+1, ns
		}
	}
	if time.Since(taken) < ttl {
		t.Fatalf("3 renewals within %v: the heartbeat runs too often (want every %v)", time.Since(taken), ttl/3)
	}
	// Held past its first expiry, the lease is still taken.
	if r, err := leaseFunc(other.Lease(t.Context(), "t", checkpoint.LeaseOptions{})); !errors.Is(err, runtime.ErrThreadBusy) {
		if r != nil {
			r()
		}
		t.Fatalf("%v into a renewed lease of TTL %v, another store got it: %v", time.Since(taken), ttl, err)
	}
	release()
	r, err := leaseFunc(other.Lease(t.Context(), "t", checkpoint.LeaseOptions{}))
	if err != nil {
		t.Fatalf("Lease right after release: %v", err)
	}
	r()
}

// TestCloseReleasesLeases: a Store closed while holding leases frees them
// for other processes at once, and their release funcs become no-ops.
func TestCloseReleasesLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var releases []func()
	for i := range 3 {
		r, err := leaseFunc(s.Lease(t.Context(), fmt.Sprint("t", i), checkpoint.LeaseOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, r := range releases {
		r()
	}
	if _, err := leaseFunc(s.Lease(t.Context(), "t9", checkpoint.LeaseOptions{})); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Lease on a closed store: %v, want an error saying it is closed", err)
	}
	other := openT(t, path)
	for i := range 3 {
		r, err := leaseFunc(other.Lease(t.Context(), fmt.Sprint("t", i), checkpoint.LeaseOptions{}))
		if err != nil {
			t.Fatalf("lease of thread t%d after the holder closed: %v", i, err)
		}
		r()
	}
}

// TestTwoStoresOneFile writes one file from two Stores (two writer
// connections, as two processes would) and many goroutines: SQLite's locks
// and the busy timeout serialize the commits; none fails or is lost.
func TestTwoStoresOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	stores := []*Store{openT(t, path, Synchronous("NORMAL")), openT(t, path, Synchronous("NORMAL"))}
	const workers, rounds = 6, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			s := stores[w%2]
			ctx := context.Background()
			for i := range rounds {
				task := fmt.Sprintf("w%d:%d", w, i)
				if err := s.PutJournal(ctx, "shared", task, []checkpoint.JournalEntry{{Key: "k#0"}}); err != nil {
					errs <- err
					return
				}
				if err := s.Put(ctx, cp("shared", task), []string{task}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	cps, err := stores[1].List(t.Context(), "shared", 0)
	if err != nil || len(cps) != workers*rounds {
		t.Fatalf("%d checkpoints (%v), want %d", len(cps), err, workers*rounds)
	}
	var left int
	stores[0].w.QueryRow("SELECT count(*) FROM ilmek_journals").Scan(&left)
	if left != 0 {
		t.Errorf("%d journals left, want every one dropped by its Put", left)
	}
}
