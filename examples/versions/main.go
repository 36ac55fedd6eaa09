// Command versions shows a document changing under paused threads, with
// two generated packages of one document in one binary: approvalv1 (the
// document as it was) and approvalv2 (a reworded question on the paused
// node, and a new node after it).
//
//	go run ./examples/versions -db /tmp/versions.db
//
// It pauses three approvals on version 1, then "deploys" version 2:
//
//   - a runtime.Versions set finishes the first on version 1, the version
//     its checkpoints were written by, while a new thread starts on 2;
//   - version 2 alone refuses the second (the paused node's config
//     changed), naming the reason, and writes nothing;
//   - runtime.Migrate moves the second to version 2 with a typed function
//     (approvalv1.State in, approvalv2.State out), after a dry run, and it
//     then asks the new question and finishes on version 2.
//
// Regenerate both packages after changing a document with go generate.
package main

//go:generate go tool ilmekgen -o approvalv1 --type amount=float64 --type approved=bool --type log=[]string approval.v1.json
//go:generate go tool ilmekgen -o approvalv2 --type amount=float64 --type approved=bool --type log=[]string approval.v2.json

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ilmek-go/ilmek/examples/versions/approvalv1"
	"github.com/ilmek-go/ilmek/examples/versions/approvalv2"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

func main() {
	fs := flag.NewFlagSet("versions", flag.ContinueOnError)
	db := fs.String("db", filepath.Join(os.TempDir(), "ilmek-versions.db"), "SQLite `file` that keeps the threads (removed first)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := run(context.Background(), *db, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "versions:", err)
		os.Exit(1)
	}
}

// run plays the whole story on a fresh SQLite file at db.
func run(ctx context.Context, db string, out io.Writer) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	store, err := sqlite.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	v1, err := approvalv1.New(nodesV1{})
	if err != nil {
		return err
	}
	v2, err := approvalv2.New(nodesV2{})
	if err != nil {
		return err
	}

	// Version 1 is live: two invoices pause on their approval.
	for i, thread := range []string{"invoice-1", "invoice-2"} {
		amount := float64(100 * (i + 1))
		res, err := v1.Thread(store, thread).Invoke(ctx, approvalv1.Update{Amount: &amount})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s on version 1, asking %s\n", thread, res.Status, res.Pending[0].Payload)
	}

	// Version 2 is deployed beside it.
	vs, err := runtime.NewVersions(v1, v2)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "deployed version 2 (%s) beside version 1 (%s)\n", short(v2.Fingerprint()), short(v1.Fingerprint()))

	// The set runs each thread on the version that wrote it.
	if err := approve(ctx, vs, store, "invoice-1", out); err != nil {
		return err
	}
	amount := 300.0
	ver, err := vs.For(ctx, store, "invoice-3")
	if err != nil {
		return err
	}
	res, err := ver.(*approvalv2.Graph).Thread(store, "invoice-3").Invoke(ctx, approvalv2.Update{Amount: &amount})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "invoice-3: %s on version 2 (a new thread starts on the newest), asking %s\n", res.Status, res.Pending[0].Payload)
	if err := approve(ctx, vs, store, "invoice-3", out); err != nil {
		return err
	}

	// Version 2 alone refuses a thread paused by version 1 on a node whose
	// config changed, before anything runs or is written.
	_, err = v2.Thread(store, "invoice-2").Resume(ctx, runtime.Answer(true))
	var ie *runtime.IncompatibleError
	if !errors.As(err, &ie) {
		return fmt.Errorf("invoice-2 on version 2 alone: %v, want an incompatible-version refusal", err)
	}
	for _, r := range ie.Reasons {
		fmt.Fprintf(out, "invoice-2 on version 2 alone: refused, %s %q: %s; %s\n", r.Kind, r.Subject, r.Msg, r.Fix)
	}

	// An explicit, typed migration moves it: the dry run reports, then the
	// migration writes one checkpoint, and the thread asks again.
	move := func(old approvalv1.State, planned []string) (approvalv2.State, []string, error) {
		next := approvalv2.State{}.With(approvalv2.Update{
			Amount: &old.Amount,
			Log:    append(old.Log, "migrated to version 2"),
		})
		return next, planned, nil
	}
	rep, err := runtime.Migrate(ctx, store, "invoice-2", v1, v2, move, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "invoice-2 migration, dry run: plan %v -> %v, changes %v, drops interrupts %v\n", rep.OldPlan, rep.NewPlan, rep.Changed, rep.DroppedInterrupts)
	if _, err := runtime.Migrate(ctx, store, "invoice-2", v1, v2, move, false); err != nil {
		return err
	}
	ver, err = vs.For(ctx, store, "invoice-2")
	if err != nil {
		return err
	}
	res, err = ver.(*approvalv2.Graph).Thread(store, "invoice-2").Invoke(ctx, approvalv2.Update{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "invoice-2: migrated, %s on version 2, asking %s\n", res.Status, res.Pending[0].Payload)
	return approve(ctx, vs, store, "invoice-2", out)
}

// approve answers the thread's approval with yes on the version the set
// picks for it, and prints how the thread ended.
func approve(ctx context.Context, vs *runtime.Versions, store runtime.Checkpointer, thread string, out io.Writer) error {
	ver, err := vs.For(ctx, store, thread)
	if err != nil {
		return err
	}
	switch g := ver.(type) {
	case *approvalv1.Graph:
		res, err := g.Thread(store, thread).Resume(ctx, runtime.Answer(true))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s on version 1, log %q\n", thread, res.Status, res.State.Log)
	case *approvalv2.Graph:
		res, err := g.Thread(store, thread).Resume(ctx, runtime.Answer(true))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s on version 2, log %q\n", thread, res.Status, res.State.Log)
	default:
		return fmt.Errorf("thread %s: unexpected version %T", thread, ver)
	}
	return nil
}

// short is a fingerprint's first hex digits.
func short(fp string) string {
	fp = strings.TrimPrefix(fp, "sha256:")
	return fp[:min(12, len(fp))]
}

// nodesV1 implements approvalv1.Nodes.
type nodesV1 struct{}

func (nodesV1) Drafter(approvalv1.NodeID, approvalv1.DrafterConfig) (approvalv1.Node, error) {
	return func(_ *runtime.Ctx, s approvalv1.State) (approvalv1.Update, error) {
		return approvalv1.Update{Log: []string{fmt.Sprintf("drafted %.2f", s.Amount)}}, nil
	}, nil
}

func (nodesV1) Approver(_ approvalv1.NodeID, cfg approvalv1.ApproverConfig) (approvalv1.Node, error) {
	return func(ctx *runtime.Ctx, _ approvalv1.State) (approvalv1.Update, error) {
		ok, err := runtime.Interrupt[bool](ctx, cfg.Question)
		if err != nil {
			return approvalv1.Update{}, err
		}
		return approvalv1.Update{Approved: &ok, Log: []string{verdict(ok)}}, nil
	}, nil
}

// nodesV2 implements approvalv2.Nodes.
type nodesV2 struct{}

func (nodesV2) Drafter(approvalv2.NodeID, approvalv2.DrafterConfig) (approvalv2.Node, error) {
	return func(_ *runtime.Ctx, s approvalv2.State) (approvalv2.Update, error) {
		return approvalv2.Update{Log: []string{fmt.Sprintf("drafted %.2f", s.Amount)}}, nil
	}, nil
}

func (nodesV2) Approver(_ approvalv2.NodeID, cfg approvalv2.ApproverConfig) (approvalv2.Node, error) {
	return func(ctx *runtime.Ctx, _ approvalv2.State) (approvalv2.Update, error) {
		ok, err := runtime.Interrupt[bool](ctx, cfg.Question)
		if err != nil {
			return approvalv2.Update{}, err
		}
		return approvalv2.Update{Approved: &ok, Log: []string{verdict(ok)}}, nil
	}, nil
}

func (nodesV2) Notifier(approvalv2.NodeID, approvalv2.NotifierConfig) (approvalv2.Node, error) {
	return func(_ *runtime.Ctx, s approvalv2.State) (approvalv2.Update, error) {
		return approvalv2.Update{Log: []string{fmt.Sprintf("notified: %.2f approved=%t", s.Amount, s.Approved)}}, nil
	}, nil
}

func verdict(ok bool) string {
	if ok {
		return "approved"
	}
	return "rejected"
}
