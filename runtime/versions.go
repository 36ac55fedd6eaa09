package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Version is one graph of a Versions set: any *Graph[S, U] (spec-built,
// code-built or generated), so that versions with different state types
// can live side by side.
type Version interface {
	// Fingerprint is the graph's version identity (Graph.Fingerprint).
	Fingerprint() string
	// Shape is the graph's static shape; its Name names the document.
	Shape() *Shape
	versionDocument() (string, []byte)
}

// Versions holds several versions of one graph, oldest first, so that
// threads paused under an old version finish on it while new threads start
// on the newest. For picks the version of a thread; the caller then runs
// it (a type switch on the returned Version gives the typed graph).
type Versions struct {
	list []Version
}

// NewVersions returns the set of the given versions, oldest first. They
// must share one name (Shape().Name) and have distinct fingerprints.
func NewVersions(versions ...Version) (*Versions, error) {
	if len(versions) == 0 {
		return nil, &SpecError{Msg: "runtime: NewVersions needs at least one graph"}
	}
	seen := map[string]int{}
	name := versions[0].Shape().Name
	for i, v := range versions {
		if v == nil {
			return nil, &SpecError{Msg: fmt.Sprintf("runtime: NewVersions: version %d is nil", i)}
		}
		if n := v.Shape().Name; n != name {
			return nil, &SpecError{Msg: fmt.Sprintf("runtime: NewVersions: version %d is graph %q, version 0 is %q; a set holds versions of one graph", i, n, name)}
		}
		if j, dup := seen[v.Fingerprint()]; dup {
			return nil, &SpecError{Msg: fmt.Sprintf("runtime: NewVersions: versions %d and %d have the same fingerprint %s; keep one", j, i, v.Fingerprint())}
		}
		seen[v.Fingerprint()] = i
	}
	return &Versions{list: append([]Version(nil), versions...)}, nil
}

// Newest returns the last version, the one new threads start on.
func (vs *Versions) Newest() Version { return vs.list[len(vs.list)-1] }

// All returns the versions, oldest first.
func (vs *Versions) All() []Version { return append([]Version(nil), vs.list...) }

// For returns the version a run or resume of threadID must use:
//
//   - the newest, for a thread without checkpoints, or whose latest
//     checkpoint records no fingerprint (written before versions were
//     recorded);
//   - the version whose fingerprint the thread's latest checkpoint
//     records, when the set holds it;
//   - otherwise the newest, when the checkpoint is compatible with it (see
//     Compatible; the old document is read from cp when it is a
//     checkpoint.DocumentStore);
//   - otherwise an *IncompatibleError naming each reason.
func (vs *Versions) For(ctx context.Context, cp Checkpointer, threadID string) (Version, error) {
	if err := CheckThreadID(threadID); err != nil {
		return nil, err
	}
	latest, err := cp.Get(ctx, threadID, "")
	switch {
	case errors.Is(err, ErrNotFound):
		return vs.Newest(), nil
	case err != nil:
		return nil, &CheckpointError{Op: "get", Err: err}
	}
	if latest.Fingerprint == "" {
		return vs.Newest(), nil
	}
	for _, v := range vs.list {
		if v.Fingerprint() == latest.Fingerprint {
			return v, nil
		}
	}
	var old []byte
	if ds, ok := cp.(checkpoint.DocumentStore); ok {
		d, err := ds.GetDocument(ctx, latest.Fingerprint)
		switch {
		case err == nil:
			old = d
		case !errors.Is(err, ErrNotFound):
			return nil, &CheckpointError{Op: "get document " + latest.Fingerprint, Err: err}
		}
	}
	newest := vs.Newest()
	fp, doc := newest.versionDocument()
	if err := Compatible(latest, old, doc); err != nil {
		var ie *IncompatibleError
		if errors.As(err, &ie) {
			ie.ThreadID, ie.To = threadID, fp
		}
		return nil, err
	}
	return newest, nil
}
