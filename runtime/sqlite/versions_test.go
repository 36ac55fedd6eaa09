package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// schemaV1 is the version 1 schema as it was released, to test the
// in-place migration to version 2.
const schemaV1 = `
CREATE TABLE ilmek_meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO ilmek_meta (key, value) VALUES ('schema_version', '1');
CREATE TABLE ilmek_checkpoints (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT NOT NULL, id TEXT NOT NULL,
	parent_id TEXT NOT NULL DEFAULT '', plan_id TEXT NOT NULL DEFAULT '', step INTEGER NOT NULL,
	created_ns INTEGER NOT NULL, channels BLOB, next BLOB, pending BLOB, UNIQUE (thread_id, id));
CREATE INDEX ilmek_checkpoints_latest ON ilmek_checkpoints (thread_id, seq);
CREATE TABLE ilmek_journals (thread_id TEXT NOT NULL, task_id TEXT NOT NULL, entries BLOB, PRIMARY KEY (thread_id, task_id)) WITHOUT ROWID;
CREATE TABLE ilmek_leases (thread_id TEXT NOT NULL PRIMARY KEY, owner TEXT NOT NULL, holder TEXT NOT NULL, expires_ns INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO ilmek_checkpoints (thread_id, id, plan_id, step, created_ns, channels, next, pending)
	VALUES ('old', 'c1', 'c1', 0, 1, '{}', '[]', 'null');
`

func TestMigrateVersion1ToCurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := openT(t, path)
	var v string
	if err := s.w.QueryRow("SELECT value FROM ilmek_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != strconv.Itoa(schemaVersion) {
		t.Fatalf("schema version after Open: %q %v, want %d", v, err, schemaVersion)
	}
	c, err := s.Get(t.Context(), "old", "")
	if err != nil || c.ID != "c1" || c.Fingerprint != "" || c.Format != 0 {
		t.Fatalf("checkpoint of version 1: %+v %v", c, err)
	}
	if err := s.PutDocument(t.Context(), "sha256:x", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if d, err := s.GetDocument(t.Context(), "sha256:x"); err != nil || string(d) != `{}` {
		t.Fatalf("GetDocument: %q %v", d, err)
	}
	if _, err := s.GetDocument(t.Context(), "sha256:y"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GetDocument of an unknown fingerprint: %v", err)
	}
}

const approvalDoc = `{
  "name": "approval",
  "channels": {"decision": {}, "draft": {}},
  "nodes": [
    {"id": "write", "type": "writer"},
    {"id": "review", "type": "approval", "config": {"q": 1}}
  ],
  "edges": [
    {"from": "__start__", "to": "write"},
    {"from": "write", "to": "review"},
    {"from": "review", "to": "__end__"}
  ]
}`

// writerNode is the node type "writer" of approvalDoc: it writes a draft.
func writerNode(spec.Node) (runtime.NodeFunc, error) {
	return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"draft": "d"}, nil }, nil
}

func approvalGraph(t *testing.T, doc string) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.Load("approval.json", []byte(doc), runtime.Registry{
		"writer": writerNode,
		"approval": func(spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				a, err := runtime.Interrupt[string](ctx, "ok?")
				return runtime.Values{"decision": a}, err
			}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The version rule over SQLite, across a reopen: the old document is read
// back from the file.
func TestChangedDocumentUnderPausedThreadSQLite(t *testing.T) {
	cases := []struct {
		name, from, to string
		want           runtime.ReasonKind
	}{
		{"changed config of the paused node", `"q": 1`, `"q": 2`, runtime.ReasonNodeConfig},
		{"changed type of the paused node", `"type": "approval"`, `"type": "approval2"`, runtime.ReasonNodeType},
		{"renamed held channel", `"draft": {}`, `"text": {}`, runtime.ReasonChannelMissing},
		{"changed reducer of a held channel", `"draft": {}`, `"draft": {"reducer": "append"}`, runtime.ReasonReducer},
		{"added node", `{"id": "write", "type": "writer"},`, `{"id": "write", "type": "writer"}, {"id": "extra", "type": "writer"},`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "threads.db")
			s := openT(t, path)
			v1 := approvalGraph(t, approvalDoc)
			res, err := v1.Thread(s, "t").Invoke(t.Context(), runtime.Values{})
			if err != nil || res.Status != runtime.StatusInterrupted {
				t.Fatalf("v1: %v %v", res.Status, err)
			}
			s.Close()
			s = openT(t, path)
			newDoc := strings.Replace(approvalDoc, tc.from, tc.to, 1)
			var v2 *runtime.Graph[runtime.Values, runtime.Values]
			if tc.want == runtime.ReasonNodeType {
				v2 = approvalGraphTyped(t, newDoc) // a registry with approval2
			} else {
				v2 = approvalGraph(t, newDoc)
			}
			before, _ := s.List(t.Context(), "t", 0)
			res, err = v2.Thread(s, "t").Resume(t.Context(), runtime.Answer("yes"))
			after, _ := s.List(t.Context(), "t", 0)
			if tc.want == "" {
				if err != nil || res.Status != runtime.StatusDone {
					t.Fatalf("resume: %v %v", res.Status, err)
				}
				latest, _ := s.Get(t.Context(), "t", "")
				if latest.Fingerprint != v2.Fingerprint() || latest.Format != checkpoint.Format {
					t.Errorf("latest checkpoint records %q/%d", latest.Fingerprint, latest.Format)
				}
				return
			}
			var ie *runtime.IncompatibleError
			if !errors.As(err, &ie) || len(ie.Reasons) != 1 || ie.Reasons[0].Kind != tc.want {
				t.Fatalf("resume: %v, want one %s", err, tc.want)
			}
			if len(after) != len(before) {
				t.Errorf("a refused resume wrote %d checkpoints", len(after)-len(before))
			}
		})
	}
}

func approvalGraphTyped(t *testing.T, doc string) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.Load("approval.json", []byte(doc), runtime.Registry{
		"writer": writerNode,
		"approval2": func(spec.Node) (runtime.NodeFunc, error) {
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Migrate over SQLite: the migrated checkpoint and its MigratedFrom survive
// a reopen, and the thread then runs on the new version.
func TestMigrateSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	s := openT(t, path)
	v1 := approvalGraph(t, approvalDoc)
	v2 := approvalGraph(t, `{"name": "approval", "channels": {"decision": {}, "draft": {}},
		"nodes": [{"id": "write", "type": "writer"}], "edges": [{"from": "__start__", "to": "write"}, {"from": "write", "to": "__end__"}]}`)
	if res, err := v1.Thread(s, "t").Invoke(t.Context(), runtime.Values{}); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("v1: %v %v", res.Status, err)
	}
	rep, err := runtime.Migrate(t.Context(), s, "t", v1, v2, func(old runtime.Values, planned []string) (runtime.Values, []string, error) {
		old["decision"] = "dropped"
		return old, nil, nil
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, path)
	latest, err := s.Get(t.Context(), "t", "")
	if err != nil || latest.ID != rep.CheckpointID || latest.MigratedFrom != v1.Fingerprint() || latest.Fingerprint != v2.Fingerprint() || len(latest.Next) != 0 {
		t.Fatalf("after reopen: %+v %v", latest, err)
	}
	if res, err := v2.Thread(s, "t").Invoke(t.Context(), runtime.Values{}); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("v2 after the migration: %v %v", res.Status, err)
	}
}
