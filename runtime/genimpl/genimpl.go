// Package genimpl is the support code of the packages ilmekgen generates,
// as protoimpl is protobuf's: the contract between a generated program and
// the runtime's executor (Program, Planner, Target, New), the generator
// version (GenVersion), and the fixed machinery every generated package
// would otherwise carry a copy of (the program's fixed methods, the JSON
// object writer, the registry adapter and its conversions, the builder of
// New), so that a generated package holds only what depends on its
// document and package runtime exports only what applications use.
//
// It is for generated code only; its API may change with GenVersion.
// Generated code pins that version with EnforceVersion constants, so a
// generated package and a genimpl that do not match fail to compile with a
// pointer to re-run go generate.
package genimpl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// ObjectWriter writes one JSON object member by member: the MarshalJSON
// methods of a generated State and Update.
type ObjectWriter struct {
	b   []byte
	err error
}

// Raw writes the member key (a JSON string with its colon) with a value
// that is already JSON.
func (w *ObjectWriter) Raw(key, value string) {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, key...)
	w.b = append(w.b, value...)
}

// Member writes the member key (a JSON string with its colon) with the
// JSON encoding of v; the first failure is kept for Done.
func (w *ObjectWriter) Member(key string, v any) {
	if w.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		w.err = fmt.Errorf("channel %s %w", key, err)
		return
	}
	w.Raw(key, string(data))
}

// Done returns the object ({} when no member was written) or the first
// failure.
func (w *ObjectWriter) Done() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if len(w.b) == 0 {
		return []byte("{}"), nil
	}
	return append(w.b, '}'), nil
}

// Member is one member of a stored state.
type Member struct {
	Key   string
	Value json.RawMessage
}

// StateMembers reads a stored state (a JSON object) into its members in
// key order: what a generated State's UnmarshalJSON decodes.
func StateMembers(data []byte) ([]Member, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	out := make([]Member, 0, len(members))
	for _, k := range slices.Sorted(maps.Keys(members)) {
		out = append(out, Member{Key: k, Value: members[k]})
	}
	return out, nil
}

// StateChannelError is the error of a stored channel value that does not
// decode.
func StateChannelError(channel string, err error) error {
	return fmt.Errorf("state: channel %q: %w", channel, err)
}

// UndeclaredInState is the error of a stored state member that names no
// channel of graph (the graph's name as comments write it).
func UndeclaredInState(channel, graph string) error {
	return fmt.Errorf("state: channel %q is not declared by graph %s", channel, graph)
}

// Undeclared is the error of a write to a channel that shape does not
// declare, as the spec-built program reports it.
func Undeclared(channel string, shape *runtime.Shape) *runtime.ChannelError {
	names := make([]string, len(shape.Channels))
	for i, c := range shape.Channels {
		names[i] = c.Name
	}
	return &runtime.ChannelError{Channel: channel, Msg: fmt.Sprintf("write to undeclared channel %q; declared channels are [%s]", channel, strings.Join(names, ", "))}
}

// Keys returns the channels of vals in sorted order: the order in which
// the adapter converts a write, so that the first failure is
// deterministic.
func Keys(vals runtime.Values) []string {
	return slices.Sorted(maps.Keys(vals))
}

// ToAny converts v to the untyped value encoding/json decodes its JSON to:
// how the adapter shows a channel of a bound type to an untyped node.
func ToAny(channel string, v any) (any, error) {
	x, err := jsonconv.ToAny(v)
	if err != nil {
		return nil, fmt.Errorf("channel %q: %w", channel, err)
	}
	return x, nil
}

// AppendItems is what an append write of v adds to an unbound append
// channel: a list's elements, or v.
func AppendItems(v any) []any { return jsonconv.AppendItems(v) }

// MergeItems is what a merge write of v merges into an unbound merge
// channel: an object's members.
func MergeItems(channel string, v any) (map[string]any, *runtime.ChannelError) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case runtime.Values:
		return map[string]any(x), nil
	}
	return nil, &runtime.ChannelError{Channel: channel, Msg: jsonconv.NotAnObject(v)}
}

// AssertValue converts a write to a channel of interface type T (typ is
// its name for the error).
func AssertValue[T any](channel string, v any, typ string) (T, *runtime.ChannelError) {
	x, ok := v.(T)
	if !ok && v != nil {
		return x, &runtime.ChannelError{Channel: channel, Msg: fmt.Sprintf("a %T is not a %s", v, typ)}
	}
	return x, nil
}

// DecodeValue converts a write to a last_write channel of bound type T
// through JSON.
func DecodeValue[T any](channel string, v any, typ string) (T, *runtime.ChannelError) {
	return result(jsonconv.Into[T](v, typ))(channel)
}

// DecodeList converts a write to an append channel of bound type []E: a
// list's elements, or one element.
func DecodeList[E any](channel string, v any, typ string) ([]E, *runtime.ChannelError) {
	return result(jsonconv.ListInto[E](v, typ))(channel)
}

// DecodeObject converts a write to a merge channel of bound type
// map[string]V, which must be an object.
func DecodeObject[V any](channel string, v any, typ string) (map[string]V, *runtime.ChannelError) {
	return result(jsonconv.ObjectInto[V](v, typ))(channel)
}

func result[T any](x T, msg string) func(string) (T, *runtime.ChannelError) {
	return func(channel string) (T, *runtime.ChannelError) {
		if msg != "" {
			var zero T
			return zero, &runtime.ChannelError{Channel: channel, Msg: msg}
		}
		return x, nil
	}
}

// CloneMap copies m into a new map with room for extra more keys: a merge
// channel's map, copied once per fold before it is written.
func CloneMap[M ~map[string]V, V any](m M, extra int) M {
	out := make(M, len(m)+extra)
	maps.Copy(out, m)
	return out
}

// JSONFloat32 is the float64 that the JSON encoding of x decodes to: the
// shortest decimal that reads back as x, as guards compare it.
func JSONFloat32[F ~float32](x F) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

// SpecDoc returns the function that decodes a generated package's embedded
// document (source names it in diagnostics) once.
func SpecDoc(source, text string) func() (*spec.Graph, error) {
	return sync.OnceValues(func() (*spec.Graph, error) {
		g, diags := spec.Decode(source, []byte(text))
		if err := diags.Err(); err != nil {
			return nil, err
		}
		return g, nil
	})
}

// RegistryNode builds node index id of the document doc returns with the
// factory reg has for its type, given the node exactly as the document
// stores it (raw config included): what Adapter.Registry serves.
func RegistryNode(reg runtime.Registry, doc func() (*spec.Graph, error), id int) (runtime.NodeFunc, error) {
	g, err := doc()
	if err != nil {
		return nil, err
	}
	n := g.Nodes[id]
	n.Config = bytes.Clone(n.Config)
	factory, ok := reg[n.Type]
	if !ok {
		names := slices.Sorted(maps.Keys(reg))
		return nil, fmt.Errorf("type %q is not in the registry (registered: %q)", n.Type, names)
	}
	fn, err := factory(n)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, errors.New("the registry's factory returned a nil function")
	}
	return fn, nil
}

// Builder collects the nodes a generated New builds into nodes (the
// program's array, indexed by node) and every failure. N is the package's
// Node, a function of its State S returning its Update U.
type Builder[S, U any, N ~func(*runtime.Ctx, S) (U, error)] struct {
	pkg   string
	shape *runtime.Shape
	nodes []N
	errs  []error
}

// NewBuilder starts building the nodes of the graph of shape into nodes
// for New of package pkg.
func NewBuilder[S, U any, N ~func(*runtime.Ctx, S) (U, error)](pkg string, shape *runtime.Shape, nodes []N) *Builder[S, U, N] {
	return &Builder[S, U, N]{pkg: pkg, shape: shape, nodes: nodes}
}

// Add returns the function that records the result of building node id
// with the Nodes method named method.
func (b *Builder[S, U, N]) Add(id int, method string) func(N, error) {
	return func(fn N, err error) {
		n := b.shape.Nodes[id]
		switch {
		case err != nil:
			b.errs = append(b.errs, fmt.Errorf("node %q (type %q): %w", n.ID, n.Type, err))
		case fn == nil:
			b.errs = append(b.errs, fmt.Errorf("node %q (type %q): Nodes.%s returned a nil Node", n.ID, n.Type, method))
		default:
			b.nodes[id] = fn
		}
	}
}

// New returns the graph of p, whose nodes b built, or every failure to
// build them as one *runtime.SpecError.
func (b *Builder[S, U, N]) New(p Program[S, U], opts []runtime.Option) (*runtime.Graph[S, U], error) {
	if err := b.Err(); err != nil {
		return nil, err
	}
	return New(p, opts...)
}

// Err reports every failure as one *runtime.SpecError, or nil.
func (b *Builder[S, U, N]) Err() error {
	if len(b.errs) == 0 {
		return nil
	}
	msgs := make([]string, len(b.errs))
	for i, e := range b.errs {
		msgs[i] = e.Error()
	}
	return &runtime.SpecError{Msg: b.pkg + ": cannot build graph:\n\t" + strings.Join(msgs, "\n\t"), Err: errors.Join(b.errs...)}
}
