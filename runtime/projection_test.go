package runtime_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

func TestProjectionModes(t *testing.T) {
	tests := []struct {
		ev    runtime.Event
		modes []runtime.Mode
		want  []runtime.Mode
	}{
		{runtime.Event{Type: runtime.EventState, Seq: 4}, []runtime.Mode{runtime.ModeValues, runtime.ModeUpdates}, []runtime.Mode{runtime.ModeValues}},
		{runtime.Event{Type: runtime.EventNodeEnd, Node: "a"}, []runtime.Mode{runtime.ModeValues, runtime.ModeUpdates, runtime.ModeDebug}, []runtime.Mode{runtime.ModeUpdates, runtime.ModeDebug}},
		{runtime.Event{Type: runtime.EventCustom, Payload: runtime.Token{Type: "token", Text: "hi"}}, []runtime.Mode{runtime.ModeCustom, runtime.ModeMessages}, []runtime.Mode{runtime.ModeCustom, runtime.ModeMessages}},
		{runtime.Event{Type: runtime.EventCustom, Payload: map[string]any{"progress": 1}}, []runtime.Mode{runtime.ModeCustom, runtime.ModeMessages}, []runtime.Mode{runtime.ModeCustom}},
		{runtime.Event{Type: runtime.EventCustom, Payload: map[string]any{"type": "token", "text": "x"}}, []runtime.Mode{runtime.ModeMessages}, []runtime.Mode{runtime.ModeMessages}},
		{runtime.Event{Type: runtime.EventRunEnd}, []runtime.Mode{runtime.ModeValues, runtime.ModeCustom}, nil},
	}
	for _, tc := range tests {
		tc.ev.Seq, tc.ev.NS = 7, []string{}
		parts := runtime.Project(tc.ev, tc.modes...)
		var got []runtime.Mode
		for _, p := range parts {
			got = append(got, p.Mode)
			if p.Seq != 7 || p.NS == nil {
				t.Errorf("%s part lost seq/ns: %+v", p.Mode, p)
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.ev.Type, d)
		}
	}
}

func TestProjectedStreamsSeveralModes(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("p").Channel("x", "").
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.EmitToken("tok", map[string]any{"i": 1})
			ctx.Emit("progress")
			return runtime.Values{"x": 1}, nil
		}).Edge(spec.Start, "a"))
	var got []string
	for p, err := range runtime.Projected(g.Stream(context.Background(), nil), runtime.ModeUpdates, runtime.ModeMessages, runtime.ModeValues) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(p.Mode))
	}
	if d := cmp.Diff([]string{"messages", "updates", "values"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestReconnectBySeq(t *testing.T) {
	b := runtime.NewBuilder("chain").Channel("n", "")
	prev := spec.Start
	for _, id := range []string{"a", "b", "c", "d"} {
		b.Node(id, write(runtime.Values{"n": id}))
		b.Edge(prev, id)
		prev = id
	}
	g := mustCompile(t, b)
	var log runtime.EventLog
	var seen int64
	// The consumer drops its connection after five events; the run goes on
	// being recorded.
	stream := log.Record(g.Stream(context.Background(), nil))
	next, stop := iterPull(stream)
	for range 5 {
		ev, ok := next()
		if !ok {
			t.Fatal("run ended early")
		}
		seen = ev.Seq
	}
	for {
		if _, ok := next(); !ok {
			break
		}
	}
	stop()
	rest := log.Since(seen)
	if len(rest) == 0 {
		t.Fatal("nothing after reconnect")
	}
	for i, ev := range rest {
		if ev.Seq != seen+int64(i)+1 {
			t.Fatalf("after reconnect at %d got seq %d at position %d: the sequence is broken", seen, ev.Seq, i)
		}
	}
	if last := rest[len(rest)-1]; last.Type != runtime.EventRunEnd {
		t.Errorf("last event %s, want run_end", last.Type)
	}
}
