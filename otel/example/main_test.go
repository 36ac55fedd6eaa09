package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExample checks the tree the example prints (the README's command),
// without the timings, and that with them every span shows its duration.
func TestExample(t *testing.T) {
	var b bytes.Buffer
	if err := run(context.Background(), &b, false, false); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
	b.Reset()
	if err := run(context.Background(), &b, true, true); err != nil {
		t.Fatal(err)
	}
	spanLine := regexp.MustCompile(`(?m)^ *[A-Za-z][^·→\n]*$`)
	timed := regexp.MustCompile(`^ *[^(]+ \([0-9.]+(ns|µs|ms|s)\)`)
	lines := spanLine.FindAllString(b.String(), -1)
	if len(lines) != 18 {
		t.Errorf("%d span lines with timings, want 18:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if !timed.MatchString(l) {
			t.Errorf("span line without a duration: %q", l)
		}
	}
}

const want = `POST /refunds
  run refund ilmek.graph.name=refund ilmek.thread.id=refund-A-1001 ilmek.run.status=interrupted ilmek.run.supersteps=3
    · ilmek.lease.taken
    checkpoint ilmek.superstep=0 ilmek.checkpoint.pause=false
    superstep ilmek.superstep=1 ilmek.superstep.tasks=1
      task triage ilmek.node.id=triage ilmek.task.key=triage ilmek.superstep=1 ilmek.task.attempt=1 ilmek.task.outcome=done
      checkpoint ilmek.superstep=1 ilmek.checkpoint.pause=false
    superstep ilmek.superstep=2 ilmek.superstep.tasks=2
      task lookup ilmek.node.id=lookup ilmek.node.type=shop.order ilmek.task.key=lookup ilmek.superstep=2 ilmek.task.attempt=1 ilmek.task.outcome=done
        · ilmek.step.executed ilmek.step.key=get-order#0
      task policy ilmek.node.id=policy ilmek.node.type=rules ilmek.task.key=policy ilmek.superstep=2 ilmek.task.attempt=1 ilmek.task.outcome=done
      checkpoint ilmek.superstep=2 ilmek.checkpoint.pause=false
    superstep ilmek.superstep=3 ilmek.superstep.tasks=1
      · ilmek.interrupt.opened ilmek.interrupt.id=pay:interrupt#0 ilmek.node.id=pay
      task pay ilmek.node.id=pay ilmek.node.type=shop.refund ilmek.task.key=pay ilmek.superstep=3 ilmek.task.attempt=1 ilmek.task.outcome=interrupted
      checkpoint ilmek.superstep=2 ilmek.checkpoint.pause=true
POST /refunds/A-1001/approve
  run refund ilmek.graph.name=refund ilmek.thread.id=refund-A-1001 ilmek.run.resume=true ilmek.run.status=done ilmek.run.supersteps=1
    · ilmek.lease.taken
    · ilmek.interrupt.answered ilmek.interrupt.id=pay:interrupt#0 ilmek.node.id=pay
    · ilmek.resume ilmek.resume.accepted=true
    → link to run refund ilmek.link.kind="paused run"
    superstep ilmek.superstep=3 ilmek.superstep.tasks=1
      task pay ilmek.node.id=pay ilmek.node.type=shop.refund ilmek.task.key=pay ilmek.superstep=3 ilmek.task.attempt=2 ilmek.task.outcome=done
        · ilmek.step.executed ilmek.step.key=refund#0 error.type=*errors.errorString exception.message="payment gateway timed out"
        · ilmek.task.retry ilmek.task.attempt=1 error.type=*errors.errorString exception.message="node \"pay\" (task \"pay\"): payment gateway timed out"
        · ilmek.step.executed ilmek.step.key=refund#0
      checkpoint ilmek.superstep=3 ilmek.checkpoint.pause=false
`
