package studio

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

// Review is what publishing a revision over the published version would
// change: spec.Compare's changes, each classified for paused and new
// threads, and the paused threads of Config.Checkpointer the change
// touches (runtime.AffectedThreads).
type Review struct {
	// Published is the published version reviewed against (0: none, and
	// then there is nothing to compare); Revision the revision to publish.
	Published int `json:"published"`
	Revision  int `json:"revision"`
	// From and To are the two fingerprints.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Same is set when the revision has the published fingerprint.
	Same     bool           `json:"same,omitempty"`
	Changes  []Change       `json:"changes"`
	Affected []AffectedView `json:"affected"`
	// Unsafe is set when publishing needs confirm_unsafe: a change is
	// unsafe for new threads, a thread is affected, or, without
	// Config.Checkpointer to tell which threads are paused, a change is
	// unsafe for paused threads. (With a checkpointer, a change unsafe
	// only for paused threads that touches none is not.)
	Unsafe bool `json:"unsafe"`
	// Errors are the revision's errors; a revision with errors cannot be
	// published.
	Errors []Diagnostic `json:"errors,omitempty"`
}

// Change is one spec.Change, as JSON; Kind "unchecked" says that the
// published version cannot be built with the children its subgraph nodes
// run now (a pin or a channel changed), so the paused threads were not
// compared: a change unsafe for them, which publishing must confirm.
type Change struct {
	Kind         string `json:"kind"`
	Subject      string `json:"subject"`
	OldPath      string `json:"old_path,omitempty"`
	NewPath      string `json:"new_path,omitempty"`
	Detail       string `json:"detail"`
	UnsafePaused bool   `json:"unsafe_paused"`
	UnsafeNew    bool   `json:"unsafe_new"`
	Reason       string `json:"reason,omitempty"`
}

// AffectedView is one runtime.AffectedThread, as JSON, with the verdict:
// whether the thread continues on the new version and, if not, why and
// what to do.
type AffectedView struct {
	Thread     string   `json:"thread"`
	Checkpoint string   `json:"checkpoint"`
	Status     string   `json:"status"`
	Nodes      []string `json:"nodes,omitempty"`
	Channels   []string `json:"channels,omitempty"`
	// Continues is set when the thread can continue on the new version
	// (which may take it elsewhere than the old one would).
	Continues bool     `json:"continues"`
	Reasons   []Reason `json:"reasons,omitempty"`
}

// Reason is one runtime.IncompatibleReason: why a thread cannot continue,
// and the fix.
type Reason struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// review compares revision rev of d with its published version.
func (s *Studio) review(ctx context.Context, p server.Principal, d Document, rev Revision) (*Review, *Report, error) {
	kids, err := s.children(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	rep := s.check(d.Name+".json", rev.Body, kids)
	out := &Review{Published: d.Published, Revision: rev.Number, To: rep.Fingerprint, Changes: []Change{}, Affected: []AffectedView{}}
	for _, x := range rep.Diagnostics {
		if x.Severity == "error" {
			out.Errors = append(out.Errors, x)
		}
	}
	if d.Published == 0 || rep.Errors > 0 {
		return out, &rep, nil
	}
	pub, err := s.cfg.Repository.Published(ctx, d.Name)
	if err != nil {
		return nil, nil, err
	}
	out.From, out.Same = pub.Fingerprint, pub.Fingerprint == rep.Fingerprint
	old, diags := spec.Decode(d.Name+".json", pub.Body)
	if old == nil {
		return nil, nil, fmt.Errorf("studio: published version %d of %q does not decode: %w", pub.Number, d.Name, diags.Err())
	}
	for _, c := range spec.Compare(old, rep.graph) {
		out.Changes = append(out.Changes, Change{Kind: string(c.Kind), Subject: c.Subject, OldPath: c.OldPath, NewPath: c.NewPath,
			Detail: c.Detail, UnsafePaused: c.UnsafePaused, UnsafeNew: c.UnsafeNew, Reason: c.Reason})
		out.Unsafe = out.Unsafe || c.UnsafeNew || (c.UnsafePaused && s.cfg.Checkpointer == nil)
	}
	if s.cfg.Checkpointer != nil && !out.Same {
		from, err := s.build(old, kids)
		if errors.Is(err, runtime.ErrSubgraph) {
			// The published version runs a child that has changed since
			// (a pin, a channel): the paused threads cannot be compared.
			out.Changes = append(out.Changes, Change{Kind: "unchecked", Subject: d.Name,
				Detail:       fmt.Sprintf("published version %d cannot be built with the graphs published now: %s", pub.Number, trunc(buildProblem(err), 300)),
				UnsafePaused: true, Reason: "the paused threads were not compared; publish only if none runs the published version"})
			out.Unsafe = true
			return out, &rep, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("studio: building published version %d of %q: %w", pub.Number, d.Name, err)
		}
		to, err := s.build(rep.graph, kids)
		if err != nil {
			return nil, nil, fmt.Errorf("studio: building revision %d of %q: %w", rev.Number, d.Name, err)
		}
		ts, err := runtime.AffectedThreads(ctx, s.cfg.Checkpointer, from, to)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range ts {
			a := AffectedView{Thread: t.ThreadID, Checkpoint: t.CheckpointID, Status: string(t.Status), Nodes: t.Nodes, Channels: t.Channels,
				Continues: t.Incompatible == nil}
			if t.Incompatible != nil {
				for _, r := range t.Incompatible.Reasons {
					a.Reasons = append(a.Reasons, Reason{Kind: string(r.Kind), Subject: r.Subject, Message: r.Msg, Fix: r.Fix})
				}
			}
			out.Affected = append(out.Affected, a)
			out.Unsafe = true
		}
	}
	return out, &rep, nil
}

// buildProblem says why a document does not build, in the document's
// words: its first diagnostic (runtime.FromSpec's error wraps a
// *spec.Error; its text starts with the runtime's own words), and how
// many more there are.
func buildProblem(err error) string {
	var se *spec.Error
	if !errors.As(err, &se) || len(se.Diagnostics) == 0 {
		return shortTypes(strings.TrimPrefix(err.Error(), "runtime: "))
	}
	msg := se.Diagnostics[0].Message
	if n := len(se.Diagnostics) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}
