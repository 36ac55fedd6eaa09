package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime"
)

// Graph is one graph the server runs, under its name (the graph's
// Shape().Name): a single version made with Of, or several versions of one
// document made with Versions, so that threads paused under an old version
// finish on it while new threads start on the newest.
type Graph struct {
	name     string
	versions *runtime.Versions
	byFP     map[string]version
	list     []version
}

// version is the untyped face of one *runtime.Graph[S, U]: what the server
// needs of a graph whatever its state and update types are.
type version interface {
	graph() runtime.Version
	// stream starts a run with input (JSON of the update type; empty or
	// null is the zero update, which folds nothing).
	stream(ctx context.Context, on threadRef, input json.RawMessage, opts ...runtime.RunOption) (iter.Seq2[runtime.Event, error], error)
	streamResume(ctx context.Context, on threadRef, a runtime.Answers, opts ...runtime.RunOption) iter.Seq2[runtime.Event, error]
	// thread reads the thread's latest state (runtime.ErrNotFound when it
	// has none).
	thread(ctx context.Context, cp runtime.Checkpointer, id string) (threadState, error)
	// diagram returns the §9.1 Mermaid text with where ts stands (with
	// expand, each subgraph drawn as a block holding its child, marked
	// where the child stands), and the graph's model for the SVG.
	diagram(ts *threadState, expand bool) (string, mermaid.Graph, error)
}

// threadState is runtime.ThreadState without its typed State, and the
// children its tasks hold (runtime.Thread.Subgraphs; read only when the
// thread may hold some, see mayHoldChildren).
type threadState struct {
	Checkpoint *runtime.Checkpoint
	Next       []string
	Open       []runtime.PendingInterrupt
	Children   []runtime.SubgraphState
}

// InputError is a run's input that does not decode into the graph's update
// type. The server answers it with 400.
type InputError struct {
	Graph string
	Err   error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("server: the input does not decode into graph %q's update: %v; send a JSON object of its channels", e.Graph, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

type typed[S, U any] struct{ g *runtime.Graph[S, U] }

func (t typed[S, U]) graph() runtime.Version { return t.g }

// threadRef names the thread a run of the server goes on, and the
// checkpoint it forks from ("": the latest).
type threadRef struct {
	cp       runtime.Checkpointer
	id, from string
}

// handle returns the thread handle of g that on names.
func handle[S, U any](g *runtime.Graph[S, U], on threadRef) *runtime.Thread[S, U] {
	th := g.Thread(on.cp, on.id)
	if on.from != "" {
		th = th.Fork(on.from)
	}
	return th
}

func (t typed[S, U]) stream(ctx context.Context, on threadRef, input json.RawMessage, opts ...runtime.RunOption) (iter.Seq2[runtime.Event, error], error) {
	var u U
	if in := bytes.TrimSpace(input); len(in) > 0 && !bytes.Equal(in, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&u); err != nil {
			return nil, &InputError{Graph: t.g.Shape().Name, Err: err}
		}
	}
	return handle(t.g, on).Stream(ctx, u, opts...), nil
}

func (t typed[S, U]) streamResume(ctx context.Context, on threadRef, a runtime.Answers, opts ...runtime.RunOption) iter.Seq2[runtime.Event, error] {
	return handle(t.g, on).StreamResume(ctx, a, opts...)
}

func (t typed[S, U]) thread(ctx context.Context, cp runtime.Checkpointer, id string) (threadState, error) {
	th := t.g.Thread(cp, id)
	ts, err := th.State(ctx)
	if err != nil {
		return threadState{}, err
	}
	out := threadState{Checkpoint: ts.Checkpoint, Next: ts.Next, Open: ts.Open}
	if mayHoldChildren(out, t.g.Shape()) {
		if out.Children, err = th.Subgraphs(ctx); err != nil {
			return threadState{}, err
		}
	}
	return out, nil
}

func (t typed[S, U]) diagram(ts *threadState, expand bool) (string, mermaid.Graph, error) {
	mg, err := runtime.MermaidGraph(t.g)
	if err != nil {
		return "", mermaid.Graph{}, err
	}
	o := mermaid.Options{ExpandSubgraphs: expand}
	if ts != nil {
		o.Highlight = highlight(ts)
	}
	text, err := mermaid.Render(mg, o)
	if err != nil {
		return "", mermaid.Graph{}, err
	}
	if !expand {
		mg.Subgraphs = nil // each subgraph node a box, as the Mermaid text draws it
	}
	return text, mg, nil
}

// Of returns the server's Graph of g: spec-built, code-built or generated
// (a generated package's *Graph is a *runtime.Graph of its types).
func Of[S, U any](g *runtime.Graph[S, U]) Graph {
	v := typed[S, U]{g}
	vs, _ := runtime.NewVersions(g) // one non-nil version cannot fail
	return Graph{name: g.Shape().Name, versions: vs, byFP: map[string]version{g.Fingerprint(): v}, list: []version{v}}
}

// Versions returns one Graph of several versions of one document, oldest
// first, each made with Of: a thread runs on the version that wrote it,
// else on the newest when compatible (runtime.Versions.For).
func Versions(gs ...Graph) (Graph, error) {
	var all []version
	for _, g := range gs {
		all = append(all, g.list...)
	}
	rv := make([]runtime.Version, len(all))
	for i, v := range all {
		rv[i] = v.graph()
	}
	vs, err := runtime.NewVersions(rv...)
	if err != nil {
		return Graph{}, fmt.Errorf("server.Versions: %w", err)
	}
	g := Graph{name: rv[0].Shape().Name, versions: vs, byFP: map[string]version{}, list: all}
	for _, v := range all {
		g.byFP[v.graph().Fingerprint()] = v
	}
	return g, nil
}

// Name is the graph's name, which API requests use.
func (g Graph) Name() string { return g.name }

func (g Graph) newest() version { return g.list[len(g.list)-1] }

// forThread returns the version a run of thread must use.
func (g Graph) forThread(ctx context.Context, cp runtime.Checkpointer, thread string) (version, error) {
	v, err := g.versions.For(ctx, cp, thread)
	if err != nil {
		return nil, err
	}
	if tv, ok := g.byFP[v.Fingerprint()]; ok {
		return tv, nil
	}
	return nil, errors.New("server: runtime.Versions picked a version the server does not hold")
}
