package postgres_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// The environment through which a test tells its child process what to do.
const (
	envChild  = "ILMEK_PGTEST_CHILD" // migrate or writer
	envSchema = "ILMEK_PGTEST_SCHEMA"
)

// fencingTTL is the lease TTL of the writer child: short, so that the test
// can freeze it past its lease quickly.
const fencingTTL = time.Second

// child runs the test binary as a child process.
func child(mode string) error {
	ctx := context.Background()
	dsn, schema := os.Getenv(pgtest.EnvDSN), os.Getenv(envSchema)
	switch mode {
	case "migrate":
		// Wait for the parent's go (a line on stdin), so that the children
		// open the store at the same moment.
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		s, err := postgres.Open(ctx, dsn, postgres.Schema(schema))
		if err != nil {
			return err
		}
		defer s.Close()
		// The store works: a checkpoint round trip.
		cp := &runtime.Checkpoint{ID: "c-" + strconv.Itoa(os.Getpid()), ThreadID: "t", Channels: json.RawMessage(`{}`)}
		if err := s.Put(ctx, cp, nil); err != nil {
			return err
		}
		if _, err := s.Get(ctx, "t", cp.ID); err != nil {
			return err
		}
		fmt.Println("MIGRATED")
		return nil
	case "writer":
		return writer(ctx, dsn, schema)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// writer takes thread "t"'s lease, prints LEASED, then writes a journal and
// a checkpoint under it every 10 ms, printing one line per write: "OK n" or
// "REFUSED n" (refused as lost), until standard input closes. A lost lease
// reported by the heartbeat prints "LOST".
func writer(ctx context.Context, dsn, schema string) error {
	s, err := postgres.Open(ctx, dsn, postgres.Schema(schema), postgres.LeaseTTL(fencingTTL))
	if err != nil {
		return err
	}
	defer s.Close()
	var out sync.Mutex
	say := func(f string, a ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(f+"\n", a...)
	}
	l, err := s.Lease(ctx, "t", checkpoint.LeaseOptions{Lost: func(error) { say("LOST") }})
	if err != nil {
		return err
	}
	defer l.Release()
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	say("LEASED %s", l.Fence())
	for n := 1; ; n++ {
		select {
		case <-done:
			return nil
		case <-time.After(10 * time.Millisecond):
		}
		err := l.PutJournal(ctx, "writer", []checkpoint.JournalEntry{{Key: "n", Value: json.RawMessage(strconv.Itoa(n))}})
		if err == nil {
			err = l.Commit(ctx, checkpoint.Commit{Checkpoint: &runtime.Checkpoint{ID: fmt.Sprintf("w-%08d", n), ThreadID: "t", Channels: json.RawMessage(`{}`)}})
		}
		switch {
		case errors.Is(err, postgres.ErrLeaseLost):
			say("REFUSED %d", n)
		case err != nil:
			return err
		default:
			say("OK %d", n)
		}
	}
}

// startChild starts the test binary as a child in mode on schema.
func startChild(t *testing.T, mode, schema string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envSchema+"="+schema, pgtest.EnvDSN+"="+dsn(t))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, stdin, bufio.NewScanner(stdout)
}

// TestMigrationsRacedByTwoProcesses: two processes open a store on the
// same empty schema at the same moment. Both succeed and work; the
// migrations ran once (one row per version in ilmek_migrations).
func TestMigrationsRacedByTwoProcesses(t *testing.T) {
	schema := newSchema(t, "migrate")
	type kid struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	var kids []kid
	for range 2 {
		c, in, out := startChild(t, "migrate", schema)
		kids = append(kids, kid{c, in, out})
	}
	time.Sleep(300 * time.Millisecond) // both are waiting for the go
	for _, k := range kids {
		io.WriteString(k.stdin, "go\n")
	}
	for i, k := range kids {
		var lines []string
		for k.out.Scan() {
			lines = append(lines, k.out.Text())
		}
		if err := k.cmd.Wait(); err != nil || !slicesContain(lines, "MIGRATED") {
			t.Errorf("process %d: %v, output %q; want both processes to migrate or find the schema migrated, and work", i, err, lines)
		}
	}
	var rows, top int
	err := sharedPool(t).QueryRow(context.Background(), "SELECT count(*), max(version) FROM "+schema+".ilmek_migrations").Scan(&rows, &top)
	if err != nil {
		t.Fatal(err)
	}
	if rows != postgres.SchemaVersion || top != postgres.SchemaVersion {
		t.Errorf("ilmek_migrations has %d rows up to version %d; want each of the %d versions once", rows, top, postgres.SchemaVersion)
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRefusesNewerSchema: a schema migrated by a newer build is refused
// with ErrSchemaTooNew, and left as it was.
func TestRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t, "newer")
	p := sharedPool(t)
	s, err := postgres.OpenPool(ctx, p, postgres.Schema(schema))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	next := postgres.SchemaVersion + 1
	if _, err := p.Exec(ctx, "INSERT INTO "+schema+".ilmek_migrations (version, name) VALUES ($1, 'from_the_future')", next); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.OpenPool(ctx, p, postgres.Schema(schema))
	if !errors.Is(err, postgres.ErrSchemaTooNew) || !strings.Contains(err.Error(), strconv.Itoa(next)) {
		t.Fatalf("Open on a schema at version %d: %v; want ErrSchemaTooNew naming the version", next, err)
	}
	var n int
	if err := p.QueryRow(ctx, "SELECT count(*) FROM "+schema+".ilmek_migrations").Scan(&n); err != nil || n != next {
		t.Errorf("the refused schema changed: %d migration rows, %v", n, err)
	}
}

// TestFencingFrozenHolder: a writer process holds thread t's lease and
// writes under it every 10 ms. It is frozen with SIGSTOP past its lease;
// this process takes the thread over (a new epoch) and writes; then the
// writer wakes. Every write it then tries is refused, its heartbeat
// reports the loss, and nothing it wrote is found after the takeover.
func TestFencingFrozenHolder(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t, "fencing")
	s := openStoreOn(t, schema, postgres.LeaseTTL(fencingTTL))
	cmd, stdin, out := startChild(t, "writer", schema)
	lines := make(chan string, 1024)
	go func() {
		for out.Scan() {
			lines <- out.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the writer exited early")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("the writer said nothing for 10 s")
		}
		return ""
	}
	if l := next(); !strings.HasPrefix(l, "LEASED") {
		t.Fatalf("writer: %q, want LEASED", l)
	}
	for oks := 0; oks < 5; {
		if l := next(); strings.HasPrefix(l, "OK") {
			oks++
		}
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	// Take the thread over once the frozen writer's lease has expired.
	var l checkpoint.Lease
	deadline := time.Now().Add(10 * fencingTTL)
	for {
		var err error
		l, err = s.Lease(ctx, "t", checkpoint.LeaseOptions{})
		if err == nil {
			break
		}
		if !errors.Is(err, runtime.ErrThreadBusy) || time.Now().After(deadline) {
			t.Fatalf("take over the frozen writer's lease: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer l.Release()
	if err := l.PutJournal(ctx, "writer", []checkpoint.JournalEntry{{Key: "n", Value: json.RawMessage(`"new holder"`)}}); err != nil {
		t.Fatal(err)
	}
	before := checkpointIDs(t, s)
	// Wake the writer, and let it try for a while.
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	var ok, refused int
	var lost bool
	wake := time.Now()
	for time.Since(wake) < 2*fencingTTL || refused < 10 {
		switch l := next(); {
		case l == "LOST":
			lost = true
		case strings.HasPrefix(l, "REFUSED"):
			refused++
		case strings.HasPrefix(l, "OK"):
			ok++ // written before the freeze, printed late (the checkpoints prove it)
		}
		if time.Since(wake) > 15*time.Second {
			break
		}
	}
	stdin.Close()
	after := checkpointIDs(t, s)
	j, err := s.GetJournal(ctx, "t", "writer")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after waking, the frozen writer's writes: %d refused, %d reported ok (from before the freeze); checkpoints before waking %d, after %d; heartbeat reported the loss: %v", refused, ok, len(before), len(after), lost)
	if len(after) != len(before) {
		t.Errorf("the frozen writer wrote %d checkpoints after the takeover", len(after)-len(before))
	}
	if len(j) != 1 || string(j[0].Value) != `"new holder"` {
		t.Errorf("the new holder's journal was overwritten: %+v", j)
	}
	if refused == 0 {
		t.Error("no write of the woken writer was refused")
	}
	if !lost {
		t.Error("the woken writer's heartbeat did not report its lease lost")
	}
}

// openStoreOn opens a Store on the shared pool in schema.
func openStoreOn(t *testing.T, schema string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	s, err := postgres.OpenPool(context.Background(), sharedPool(t), append([]postgres.Option{postgres.Schema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func checkpointIDs(t *testing.T, s *postgres.Store) []string {
	t.Helper()
	cps, err := s.List(context.Background(), "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(cps))
	for i, c := range cps {
		ids[i] = c.ID
	}
	return ids
}
