// Package repotest is the conformance suite of studio.Repository
// implementations: every implementation runs Run against a fresh
// repository.
package repotest

import (
	"context"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/studio"
)

// Run checks a Repository that newRepo returns empty: create, rename,
// delete, draft revisions with stale-base refusal, publishing and "the
// published version of X".
func Run(t *testing.T, newRepo func(t *testing.T) studio.Repository) {
	ctx := context.Background()
	t.Run("lifecycle", func(t *testing.T) {
		r := newRepo(t)
		d, err := r.Create(ctx, studio.Document{ID: "d1", Name: "support", Owner: "ann"}, studio.Revision{Author: "ann", Body: []byte(`{"v":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if d.Revision != 1 || d.Published != 0 || d.Owner != "ann" {
			t.Fatalf("created %+v", d)
		}
		if _, err := r.Create(ctx, studio.Document{ID: "d2", Name: "support", Owner: "bob"}, studio.Revision{Body: []byte(`{}`)}); !errors.Is(err, studio.ErrNameTaken) {
			t.Fatalf("second create with the same name: %v, want ErrNameTaken", err)
		}
		if _, err := r.Create(ctx, studio.Document{ID: "d2", Name: "billing", Owner: "bob"}, studio.Revision{Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		rev, err := r.Save(ctx, 1, studio.Revision{Document: "d1", Author: "bob", Body: []byte(`{"v":2}`), Fingerprint: "sha256:2"})
		if err != nil || rev.Number != 2 {
			t.Fatalf("save: %+v, %v", rev, err)
		}
		if _, err := r.Save(ctx, 1, studio.Revision{Document: "d1", Body: []byte(`{"v":3}`)}); !errors.Is(err, studio.ErrStale) {
			t.Fatalf("save on a stale base: %v, want ErrStale", err)
		}
		if _, err := r.Save(ctx, 1, studio.Revision{Document: "nope", Body: []byte(`{}`)}); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("save of a missing document: %v, want ErrNotFound", err)
		}
		got, err := r.Revision(ctx, "d1", 2)
		if err != nil || string(got.Body) != `{"v":2}` || got.Author != "bob" || got.Fingerprint != "sha256:2" {
			t.Fatalf("revision 2: %+v, %v", got, err)
		}
		if _, err := r.Revision(ctx, "d1", 9); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("revision 9: %v, want ErrNotFound", err)
		}
		revs, err := r.Revisions(ctx, "d1")
		if err != nil || len(revs) != 2 || revs[0].Number != 1 || revs[1].Number != 2 || revs[1].Body != nil {
			t.Fatalf("revisions: %+v, %v", revs, err)
		}
		if _, err := r.Published(ctx, "support"); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("published before publishing: %v, want ErrNotFound", err)
		}
		v, err := r.Publish(ctx, 0, studio.Version{Document: "d1", Revision: 2, Fingerprint: "sha256:2", Publisher: "ann", Body: []byte(`{"v":2}`)})
		if err != nil || v.Number != 1 || v.Name != "support" {
			t.Fatalf("publish: %+v, %v", v, err)
		}
		if _, err := r.Publish(ctx, 0, studio.Version{Document: "d1", Revision: 1, Body: []byte(`{}`)}); !errors.Is(err, studio.ErrStale) {
			t.Fatalf("publish on a stale version: %v, want ErrStale", err)
		}
		if _, err := r.Publish(ctx, 1, studio.Version{Document: "d1", Revision: 7, Body: []byte(`{}`)}); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("publish of a missing revision: %v, want ErrNotFound", err)
		}
		if _, err := r.Rename(ctx, "d1", "billing"); !errors.Is(err, studio.ErrNameTaken) {
			t.Fatalf("rename onto a taken name: %v, want ErrNameTaken", err)
		}
		if d, err := r.Rename(ctx, "d1", "helpdesk"); err != nil || d.Name != "helpdesk" || d.Published != 1 || d.Revision != 2 {
			t.Fatalf("rename: %+v, %v", d, err)
		}
		p, err := r.Published(ctx, "helpdesk")
		if err != nil || p.Number != 1 || p.Fingerprint != "sha256:2" || string(p.Body) != `{"v":2}` || p.Document != "d1" || p.Revision != 2 {
			t.Fatalf("published: %+v, %v", p, err)
		}
		if _, err := r.Publish(ctx, 1, studio.Version{Document: "d1", Revision: 1, Fingerprint: "sha256:1", Body: []byte(`{"v":1}`)}); err != nil {
			t.Fatal(err)
		}
		if p, _ := r.Published(ctx, "helpdesk"); p.Number != 2 || string(p.Body) != `{"v":1}` {
			t.Fatalf("published after a second publish: %+v", p)
		}
		vs, err := r.Versions(ctx, "d1")
		if err != nil || len(vs) != 2 || vs[0].Number != 1 || vs[1].Revision != 1 || vs[1].Name != "helpdesk" {
			t.Fatalf("versions: %+v, %v", vs, err)
		}
		list, err := r.List(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "billing" || list[1].Name != "helpdesk" {
			t.Fatalf("list: %+v, %v", list, err)
		}
		if err := r.Delete(ctx, "d1"); err != nil {
			t.Fatal(err)
		}
		if err := r.Delete(ctx, "d1"); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
		if _, err := r.Get(ctx, "d1"); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("get after delete: %v, want ErrNotFound", err)
		}
		if _, err := r.Published(ctx, "helpdesk"); !errors.Is(err, studio.ErrNotFound) {
			t.Fatalf("published after delete: %v, want ErrNotFound", err)
		}
		if _, err := r.Create(ctx, studio.Document{ID: "d3", Name: "helpdesk"}, studio.Revision{Body: []byte(`{}`)}); err != nil {
			t.Fatalf("reusing a deleted document's name: %v", err)
		}
		if revs, err := r.Revisions(ctx, "d3"); err != nil || len(revs) != 1 {
			t.Fatalf("a new document with a deleted one's name has revisions %+v, %v", revs, err)
		}
	})
}
