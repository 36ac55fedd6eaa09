// Package spantree writes finished OpenTelemetry spans as an indented
// tree, one span a line with its attributes, events and links under it:
// what the tests compare and what the example prints.
package spantree

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options chooses what Write shows.
type Options struct {
	// Skip leaves out attributes (of spans, events and links) whose key it
	// returns true for.
	Skip func(attribute.Key) bool
	// Durations shows each span's duration after its name.
	Durations bool
}

// Write writes spans as trees, roots (spans whose parent is not among
// spans) in start order. Siblings are in start order, except tasks (spans
// with an ilmek.task.key attribute), which run concurrently: they are
// ordered by their key, where the first of them started.
func Write(w io.Writer, spans []sdktrace.ReadOnlySpan, o Options) error {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		p := s.Parent()
		if _, ok := byID[p.SpanID()]; p.IsValid() && ok {
			children[p.SpanID()] = append(children[p.SpanID()], s)
			continue
		}
		roots = append(roots, s)
	}
	var b strings.Builder
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		indent := strings.Repeat("  ", depth)
		b.WriteString(indent)
		b.WriteString(s.Name())
		if o.Durations {
			fmt.Fprintf(&b, " (%s)", round(s.EndTime().Sub(s.StartTime())))
		}
		writeAttrs(&b, s.Attributes(), o.Skip)
		if st := s.Status(); st.Code == codes.Error {
			fmt.Fprintf(&b, " ERROR %q", st.Description)
		}
		b.WriteByte('\n')
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "%s  · %s", indent, e.Name)
			writeAttrs(&b, e.Attributes, o.Skip)
			b.WriteByte('\n')
		}
		for _, l := range s.Links() {
			name := "a span of another trace"
			if t, ok := byID[l.SpanContext.SpanID()]; ok {
				name = t.Name()
			}
			fmt.Fprintf(&b, "%s  → link to %s", indent, name)
			writeAttrs(&b, l.Attributes, o.Skip)
			b.WriteByte('\n')
		}
		for _, c := range order(children[s.SpanContext().SpanID()]) {
			walk(c, depth+1)
		}
	}
	for _, r := range order(roots) {
		walk(r, 0)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String is Write to a string.
func String(spans []sdktrace.ReadOnlySpan, o Options) string {
	var b strings.Builder
	_ = Write(&b, spans, o)
	return b.String()
}

// order sorts siblings: by start time, tasks by key from the start of the
// first of them.
func order(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	type item struct {
		s   sdktrace.ReadOnlySpan
		at  time.Time
		key string
	}
	items := make([]item, len(spans))
	var first time.Time
	for i, s := range spans {
		items[i] = item{s: s, at: s.StartTime(), key: taskKey(s)}
		if items[i].key != "" && (first.IsZero() || s.StartTime().Before(first)) {
			first = s.StartTime()
		}
	}
	for i := range items {
		if items[i].key != "" {
			items[i].at = first
		}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	out := make([]sdktrace.ReadOnlySpan, len(items))
	for i, it := range items {
		out[i] = it.s
	}
	return out
}

func taskKey(s sdktrace.ReadOnlySpan) string {
	for _, a := range s.Attributes() {
		if a.Key == "ilmek.task.key" {
			return a.Value.AsString()
		}
	}
	return ""
}

// writeAttrs writes " k=v ..." in the attributes' order, minus skipped
// ones.
func writeAttrs(b *strings.Builder, attrs []attribute.KeyValue, skip func(attribute.Key) bool) {
	for _, a := range attrs {
		if skip != nil && skip(a.Key) {
			continue
		}
		v := a.Value.String()
		if a.Value.Type() == attribute.STRING && (v == "" || strings.ContainsAny(v, " \"=")) {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(b, " %s=%s", a.Key, v)
	}
}

// round shortens d for reading: three significant digits.
func round(d time.Duration) time.Duration {
	for r := time.Nanosecond; r < time.Minute; r *= 10 {
		if d < 1000*r {
			return d.Round(r)
		}
	}
	return d.Round(time.Second)
}
