package otel_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"

	ilmekotel "github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestTimersObserved parks a thread on a Sleep and wakes it: the pause is
// EventTimerSet (with the wake time) on the superstep's span and the wake
// run's span has EventTimerFired (with the lateness); they count in the
// timer metrics, not the interrupt ones.
func TestTimersObserved(t *testing.T) {
	s := newSetup(t)
	g, err := runtime.NewBuilder("nap").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "wait", 20*time.Millisecond); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).Edge(spec.Start, "n").Compile(runtime.WithObserver(s.obs), runtime.WithParkAfter(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	th := g.Thread(checkpoint.NewMemory(), "t")
	res, err := th.Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusParked {
		t.Fatalf("status %q err %v, want parked", res.Status, err)
	}
	time.Sleep(time.Until(res.WakeAt))
	if res, err := th.Wake(ctx); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("wake: status %q err %v", res.Status, err)
	}
	events := map[string][]attribute.KeyValue{}
	for _, sp := range s.spans.Ended() {
		for _, e := range sp.Events() {
			if strings.HasPrefix(e.Name, "ilmek.timer.") || strings.HasPrefix(e.Name, "ilmek.interrupt.") {
				if _, dup := events[e.Name]; dup {
					t.Errorf("event %s twice", e.Name)
				}
				events[e.Name] = e.Attributes
				if want := map[string]string{ilmekotel.EventTimerSet: ilmekotel.SpanSuperstep, ilmekotel.EventTimerFired: "run nap"}[e.Name]; sp.Name() != want {
					t.Errorf("event %s on span %q, want %q", e.Name, sp.Name(), want)
				}
			}
		}
	}
	if len(events) != 2 {
		t.Fatalf("timer and interrupt events %v, want only %s and %s", events, ilmekotel.EventTimerSet, ilmekotel.EventTimerFired)
	}
	get := func(event string, k attribute.Key) attribute.Value {
		i := slices.IndexFunc(events[event], func(a attribute.KeyValue) bool { return a.Key == k })
		if i < 0 {
			t.Fatalf("event %s has no %s", event, k)
		}
		return events[event][i].Value
	}
	wake := res.WakeAt.UTC().Format(time.RFC3339Nano)
	for _, ev := range []string{ilmekotel.EventTimerSet, ilmekotel.EventTimerFired} {
		if got := get(ev, ilmekotel.KeyTimerWakeAt).AsString(); got != wake {
			t.Errorf("%s wake_at %q, want %q", ev, got, wake)
		}
		if got := get(ev, ilmekotel.KeyInterruptID).AsString(); got != "n:sleep:wait#0" {
			t.Errorf("%s id %q", ev, got)
		}
	}
	if late := get(ilmekotel.EventTimerFired, ilmekotel.KeyTimerLateness).AsFloat64(); late < 0 || late > 5 {
		t.Errorf("lateness %vs, want between 0 and 5", late)
	}
	var got []string
	for _, m := range s.metrics(t) {
		if strings.HasPrefix(m, "ilmek.timer") || strings.HasPrefix(m, "ilmek.interrupts.") {
			got = append(got, m)
		}
	}
	want := []string{
		"ilmek.timer.lateness{ilmek.graph.name=nap,ilmek.node.id=n} count=1",
		"ilmek.timers.fired{ilmek.graph.name=nap,ilmek.node.id=n} 1",
		"ilmek.timers.set{ilmek.graph.name=nap,ilmek.node.id=n} 1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
}
