package spec

import (
	"fmt"
	"io"
)

// Limits bound what Decode accepts from an untrusted document. A zero or
// negative field means the field of DefaultLimits.
type Limits struct {
	MaxBytes    int // document size in bytes, checked before parsing
	MaxDepth    int // JSON nesting depth; the top-level object is depth 1
	MaxNodes    int // entries of "nodes"
	MaxEdges    int // entries of "edges"
	MaxChannels int // members of "channels"
}

// DefaultLimits are the limits Decode applies unless told otherwise: 8 MiB,
// nesting depth 64, 100000 nodes, 400000 edges and 100000 channels.
var DefaultLimits = Limits{MaxBytes: 8 << 20, MaxDepth: 64, MaxNodes: 100000, MaxEdges: 400000, MaxChannels: 100000}

// hardMaxDepth caps MaxDepth whatever the caller asks for: the parser
// recurses once per nesting level, so the cap bounds its stack.
const hardMaxDepth = 10000

// withDefaults fills the unset fields of l from DefaultLimits and caps the
// depth at hardMaxDepth.
func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxDepth > hardMaxDepth {
		l.MaxDepth = hardMaxDepth
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultLimits.MaxNodes
	}
	if l.MaxEdges <= 0 {
		l.MaxEdges = DefaultLimits.MaxEdges
	}
	if l.MaxChannels <= 0 {
		l.MaxChannels = DefaultLimits.MaxChannels
	}
	return l
}

// Option configures Decode.
type Option func(*options)

type options struct{ limits Limits }

// WithLimits makes Decode apply l instead of DefaultLimits. Zero fields of l
// keep their default; MaxDepth is capped at 10000.
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l } }

// ReadLimited reads a document from r for Decode, with the same options,
// reading at most the MaxBytes limit plus one byte: a reader that never ends
// (a device, a stream) costs bounded memory, and Decode of what was read
// reports a document over the limit. Errors are r's.
func ReadLimited(r io.Reader, opts ...Option) ([]byte, error) {
	o := options{limits: DefaultLimits}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(o.limits.withDefaults().MaxBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("spec: reading the document: %w", err)
	}
	return data, nil
}
