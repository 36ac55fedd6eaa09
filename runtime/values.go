package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/spec"
)

// Values is the untyped state and update of graphs built from a spec at run
// time or in Go code: channel name to value. An update may hold any value
// encoding/json can encode (a struct, an int, a typed slice...); the state
// holds each in its JSON form, as encoding/json decodes it into an any:
// nil, bool, float64, string, []any, map[string]any. A channel that is
// absent is unset; in a state, append and merge channels are always
// present.
type Values map[string]any

// NodeFunc is the body of an untyped node: it reads the task's state and
// returns a partial update (nil for none). To return a command, call
// ctx.Command before returning. The state is shared with the run (and, for
// the thread's next run in this process, with the state it starts from):
// read it, do not change it in place; what a node changes reaches the
// store only through the update it returns.
type NodeFunc func(ctx *Ctx, state Values) (Values, error)

// ReducerFunc is a custom reducer of a code-built graph: it folds incoming
// into current (nil when the channel is unset) and returns the next value.
type ReducerFunc func(current, incoming any) (any, error)

// foldAppend appends incoming to current: a list is concatenated, anything
// else is one element. The appended elements are kept in their JSON form.
func foldAppend(name string, current, incoming any) ([]any, error) {
	cur, _ := current.([]any)
	n := len(cur)
	out := jsonconv.AppendTo(cur, incoming)
	for i := n; i < len(out); i++ {
		e, err := normalizeWrite(name, out[i])
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// foldMerge merges the members of incoming, in their JSON form, into a
// copy of current.
func foldMerge(name string, current, incoming any) (map[string]any, error) {
	var in map[string]any
	switch x := incoming.(type) {
	case map[string]any:
		in = x
	case Values:
		in = x
	default:
		return nil, &ChannelError{Channel: name, Msg: jsonconv.NotAnObject(incoming)}
	}
	norm, err := normalizeWrite(name, in)
	if err != nil {
		return nil, err
	}
	in = norm.(map[string]any)
	cur, _ := current.(map[string]any)
	out := make(map[string]any, len(cur)+len(in))
	for k, v := range cur {
		out[k] = v
	}
	for k, v := range in {
		out[k] = v
	}
	return out, nil
}

// normalizeWrite returns a value written to channel name in its JSON form,
// or the ChannelError of a value that has none.
func normalizeWrite(name string, v any) (any, error) {
	n, err := jsonconv.Normalize(v)
	if err != nil {
		return nil, &ChannelError{Channel: name, Msg: fmt.Sprintf("cannot hold the written %s: it has no JSON form (%v); channels hold JSON values", jsonconv.Describe(v), err)}
	}
	return n, nil
}

// ConfigError refuses a node's stored config that does not fit the Go type
// runtime.DecodeConfig decodes it into, with the problems ilmekgen reports
// for the same config and type.
type ConfigError struct {
	Node, Type string
	// GoType is the type decoded into, as ilmekgen names it.
	GoType   string
	Problems []ConfigProblem
}

// ConfigProblem is one refused value of a stored config: Path is its JSON
// path from the config ("config.retries"), Msg the words ilmekgen uses.
// Kind and the fields it names say the same in parts, for a tool that
// words a problem its own way (the studio's config form does) and should
// not parse Msg.
type ConfigProblem struct {
	Path, Msg string
	// Kind is what is wrong (ConfigWrongKind, ConfigUnknownKey,
	// ConfigOutOfRange), "" for anything else (a time that does not
	// parse, a type that cannot hold a stored value): Msg says it.
	Kind ConfigProblemKind
	// GoType is the Go type at Path as ilmekgen names it (for
	// ConfigUnknownKey, the struct type that lacks the key).
	GoType string
	// Want is the JSON kind GoType takes ("a string", "a number", "a
	// boolean", "an array", "an object", "an RFC 3339 string"), and Got
	// the JSON kind found ("null", "a string", ...): ConfigWrongKind.
	// For ConfigOutOfRange, Got is the number as written.
	Want, Got string
	// Key is the key no field takes, and Keys the keys GoType takes, in
	// field order: ConfigUnknownKey.
	Key  string
	Keys []string
	// Min and Max are GoType's range in decimal when it is an integer
	// type (ConfigWrongKind, ConfigOutOfRange; empty for any other type).
	Min, Max string
}

// ConfigProblemKind says what is wrong with a refused config value
// (ConfigProblem.Kind).
type ConfigProblemKind string

// The kinds of ConfigProblem.
const (
	// ConfigWrongKind is a value of the wrong JSON kind: a string where
	// the type takes a number.
	ConfigWrongKind ConfigProblemKind = jsonconv.ProblemWrongKind
	// ConfigUnknownKey is an object key that no field of the struct takes.
	ConfigUnknownKey ConfigProblemKind = jsonconv.ProblemUnknownKey
	// ConfigOutOfRange is a number outside its type's range.
	ConfigOutOfRange ConfigProblemKind = jsonconv.ProblemOutOfRange
)

// Error names the node and its type, each refused value by its path, and
// the fix.
func (e *ConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config of node %q (type %q): ", e.Node, e.Type)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Path, p.Msg)
	}
	fmt.Fprintf(&b, "; fix the stored config or the Go type %s", e.GoType)
	return b.String()
}

// checkConfig checks node n's stored config against t as ilmekgen does.
func checkConfig(n spec.Node, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(n.Config))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil // json.Unmarshal reports it
	}
	var probs []jsonconv.Problem
	jsonconv.CheckValue(t, raw, "config", &probs)
	if len(probs) == 0 {
		return nil
	}
	e := &ConfigError{Node: n.ID, Type: n.Type, GoType: jsonconv.TypeName(t)}
	for _, p := range probs {
		e.Problems = append(e.Problems, ConfigProblem{Path: p.Path, Msg: p.Msg, Kind: ConfigProblemKind(p.Kind), GoType: p.GoType,
			Want: p.Want, Got: p.Got, Key: p.Key, Keys: p.Keys, Min: p.Min, Max: p.Max})
	}
	return e
}

// Get returns the value of channel in values as a T, decoded strictly: a
// value that already is a T is returned as it is; anything else (the JSON
// form a checkpoint restores, or another Go type a node wrote) goes
// through its JSON encoding and must fit T as ilmekgen's config rules
// say: no key that no field of T takes, no value of the wrong JSON kind,
// no number out of its type's range. An unset channel, or a value that
// does not fit, is a *ChannelError naming the channel and each problem.
//
// Untyped programs hold values in their JSON form (map[string]any, []any,
// float64...), before and after a checkpoint alike; Get also takes a value
// of another Go type, as a Values a node builds may hold.
func Get[T any](values Values, channel string) (T, error) {
	var zero T
	v, ok := values[channel]
	if !ok {
		return zero, &ChannelError{Channel: channel, Msg: "is unset; Get reads a channel that was written"}
	}
	if x, ok := v.(T); ok {
		return x, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return zero, &ChannelError{Channel: channel, Msg: fmt.Sprintf("cannot encode the %T it holds: %v", v, err)}
	}
	t := reflect.TypeFor[T]()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return zero, &ChannelError{Channel: channel, Msg: err.Error()}
	}
	var probs []jsonconv.Problem
	jsonconv.CheckValue(t, raw, "value", &probs)
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, p := range probs {
			msgs[i] = p.Path + ": " + p.Msg
		}
		return zero, &ChannelError{Channel: channel, Msg: fmt.Sprintf("does not hold a %s: %s", jsonconv.TypeName(t), strings.Join(msgs, "; "))}
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		return zero, &ChannelError{Channel: channel, Msg: fmt.Sprintf("does not hold a %s: %v", jsonconv.TypeName(t), err)}
	}
	return out, nil
}
