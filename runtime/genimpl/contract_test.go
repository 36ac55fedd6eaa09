package genimpl_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/genimpl"
	"github.com/ilmek-go/ilmek/spec"
)

// st and up are the State and Update of a hand-written program, as a
// generated package's would be.
type st struct{ Log []string }

func (s st) MarshalJSON() ([]byte, error) { return json.Marshal(map[string][]string{"log": s.Log}) }

func (s *st) UnmarshalJSON(data []byte) error {
	var m map[string][]string
	err := json.Unmarshal(data, &m)
	s.Log = m["log"]
	return err
}

type up struct {
	Log  string
	Goto []genimpl.Target[st]
	bad  *runtime.ChannelError
}

type nodeFn = func(*runtime.Ctx, st) (up, error)

var (
	testDoc   = genimpl.SpecDoc("t.json", `{"name": "g", "channels": {"log": {"reducer": "append"}, "a": {}}, "nodes": [{"id": "a", "type": "t"}, {"id": "b", "type": "u"}], "edges": [{"from": "__start__", "to": "a"}]}`)
	testShape = genimpl.ShapeOf(testDoc)
)

// prog implements genimpl.Program with genimpl.Static.
type prog struct {
	genimpl.Static[st, *st]
	nodes []nodeFn
}

func (p *prog) Reduce(prev st, updates []up) (st, int, error) {
	next := st{Log: slices.Clip(prev.Log)}
	for i, u := range updates {
		if u.bad != nil {
			return prev, i, u.bad
		}
		if u.Log != "" {
			next.Log = append(next.Log, u.Log)
		}
	}
	return next, 0, nil
}

func (p *prog) Plan(s *st, from int, pl *genimpl.Planner[st]) error {
	if from == genimpl.StartNode {
		pl.Node(0)
	}
	return nil
}

func (p *prog) Run(ctx *runtime.Ctx, node int, s st) (up, []genimpl.Target[st], error) {
	u, err := p.nodes[node](ctx, s)
	return u, u.Goto, err
}

func newProg(a nodeFn) *prog {
	b := func(*runtime.Ctx, st) (up, error) { return up{Log: "b"}, nil }
	return &prog{Static: genimpl.Static[st, *st]{Shape: testShape, Doc: testDoc}, nodes: []nodeFn{a, b}}
}

func TestProgramRunsWithItsCommands(t *testing.T) {
	for _, tc := range []struct {
		name    string
		to      []genimpl.Target[st]
		wantLog []string
		wantBad string // the UnknownTargetError's target, "" for none
	}{
		{"goto b", []genimpl.Target[st]{genimpl.To[st](1)}, []string{"a", "b"}, ""},
		{"goto end", []genimpl.Target[st]{genimpl.To[st](genimpl.EndNode)}, []string{"a"}, ""},
		{"empty command", []genimpl.Target[st]{}, []string{"a"}, ""},
		{"send to b", []genimpl.Target[st]{genimpl.Send(1, st{Log: []string{"in"}})}, []string{"a", "b"}, ""},
		{"an index past the nodes", []genimpl.Target[st]{genimpl.To[st](5)}, nil, "NodeID(5)"},
		{"below End", []genimpl.Target[st]{genimpl.To[st](-2)}, nil, "NodeID(-2)"},
		{"a send to End", []genimpl.Target[st]{genimpl.Send(genimpl.EndNode, st{})}, nil, spec.End},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProg(func(*runtime.Ctx, st) (up, error) { return up{Log: "a", Goto: tc.to}, nil })
			g, err := genimpl.New(p)
			if err != nil {
				t.Fatal(err)
			}
			if genimpl.ProgramOf(g) != genimpl.Program[st, up](p) {
				t.Error("ProgramOf does not return the program the graph was built from")
			}
			res, err := g.Invoke(context.Background(), up{})
			var ut *runtime.UnknownTargetError
			switch {
			case tc.wantBad != "":
				if !errors.As(err, &ut) || ut.Target != tc.wantBad {
					t.Fatalf("err = %v, want an UnknownTargetError naming %q", err, tc.wantBad)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(res.State.Log, tc.wantLog):
				t.Errorf("log = %q, want %q", res.State.Log, tc.wantLog)
			}
		})
	}
}

func TestStatic(t *testing.T) {
	p := newProg(nil)
	if p.Describe() != testShape || len(p.Zero().Log) != 0 {
		t.Fatal("Describe or Zero")
	}
	data, err := p.EncodeState(st{Log: []string{"x"}})
	if err != nil || string(data) != `{"log":["x"]}` {
		t.Fatalf("EncodeState: %s, %v", data, err)
	}
	if s, err := p.DecodeState(data); err != nil || !slices.Equal(s.Log, []string{"x"}) {
		t.Fatalf("DecodeState: %v, %v", s, err)
	}
	a, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	a.Name = "changed"
	if b, _ := p.Spec(); b.Name != "g" {
		t.Errorf("Spec hands out the package's document, not a copy: %q", b.Name)
	}
}

func TestShapeAndNames(t *testing.T) {
	want := &runtime.Shape{Name: "g", Nodes: []runtime.NodeShape{{ID: "a", Type: "t"}, {ID: "b", Type: "u"}},
		Channels: []runtime.ChannelShape{{Name: "a", Reducer: "last_write"}, {Name: "log", Reducer: "append"}}}
	if testShape.Name != want.Name || !slices.Equal(testShape.Nodes, want.Nodes) || !slices.Equal(testShape.Channels, want.Channels) {
		t.Errorf("ShapeOf = %+v, want %+v", testShape, want)
	}
	for i, name := range map[int]string{0: "a", 1: "b", genimpl.EndNode: spec.End, 2: "NodeID(2)", -3: "NodeID(-3)"} {
		if got := genimpl.NodeName(testShape, i); got != name {
			t.Errorf("NodeName(%d) = %q, want %q", i, got, name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ShapeOf of a document that does not decode did not panic")
		}
	}()
	genimpl.ShapeOf(genimpl.SpecDoc("bad.json", "{"))
}

func TestLastWrite(t *testing.T) {
	v := "x"
	for _, tc := range []struct {
		wrote, had, ok bool
		writes         int
	}{
		{false, false, true, 0}, {false, true, true, 0}, {true, false, false, 0}, {true, true, true, 1},
	} {
		w := genimpl.NewWrites(nil)
		ok := genimpl.LastWrite(&w, "c", tc.wrote, tc.had, &v)
		ws, _, _ := w.Done()
		if ok != tc.ok || len(ws) != tc.writes {
			t.Errorf("wrote %v had %v: ok %v, %d writes; want %v, %d", tc.wrote, tc.had, ok, len(ws), tc.ok, tc.writes)
		}
	}
}

// TestAdapter runs an untyped node through genimpl.Adapter: its values
// become the update and its command the update's Goto; a send's input is
// converted and folded into an empty state; an unknown node is an error.
func TestAdapter(t *testing.T) {
	a := &genimpl.Adapter[st, up]{
		Shape:  testShape,
		Doc:    testDoc,
		Values: func(s st) (runtime.Values, error) { return runtime.Values{"log": s.Log}, nil },
		Update: func(v runtime.Values) up {
			s, ok := v["log"].(string)
			if _, present := v["log"]; present && !ok {
				return up{bad: &runtime.ChannelError{Channel: "log", Msg: "not a string"}}
			}
			return up{Log: s}
		},
		Fold:    func(s st, u up) st { return st{Log: append(slices.Clip(s.Log), u.Log)} },
		Failed:  func(u *up) *runtime.ChannelError { return u.bad },
		SetGoto: func(u *up, to []genimpl.Target[st]) { u.Goto = to },
	}
	for _, tc := range []struct {
		name    string
		command []runtime.Goto
		wantLog []string
		wantErr string
	}{
		{"no command", nil, []string{"a"}, ""},
		{"goto b", []runtime.Goto{runtime.To("b")}, []string{"a", "b"}, ""},
		{"send to b", []runtime.Goto{runtime.SendTo("b", runtime.Values{"log": "in"})}, []string{"a", "b"}, ""},
		{"unknown node", []runtime.Goto{runtime.To("zz")}, nil, `goto names unknown node "zz"`},
		{"send to end", []runtime.Goto{runtime.SendTo(spec.End, nil)}, nil, `goto names unknown node "__end__"`},
		{"send input that does not convert", []runtime.Goto{runtime.SendTo("b", runtime.Values{"log": 3})}, nil, `send to "b": channel "log": not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := a.Node(func(ctx *runtime.Ctx, in runtime.Values) (runtime.Values, error) {
				if tc.command != nil {
					ctx.Command(tc.command...)
				}
				return runtime.Values{"log": "a"}, nil
			})
			g, err := genimpl.New(newProg(node))
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Invoke(context.Background(), up{})
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(res.State.Log, tc.wantLog):
				t.Errorf("log = %q, want %q", res.State.Log, tc.wantLog)
			}
		})
	}
}
