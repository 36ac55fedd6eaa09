package spec

// Limits bound what Decode accepts from an untrusted document. A zero or
// negative field means the field of DefaultLimits.
type Limits struct {
	MaxBytes int // document size in bytes, checked before parsing
	MaxDepth int // JSON nesting depth; the top-level object is depth 1
	MaxNodes int // entries of "nodes"
	MaxEdges int // entries of "edges"
}

// DefaultLimits are the limits Decode applies unless told otherwise: 8 MiB,
// nesting depth 64, 100000 nodes and 400000 edges.
var DefaultLimits = Limits{MaxBytes: 8 << 20, MaxDepth: 64, MaxNodes: 100000, MaxEdges: 400000}

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
	return l
}

// Option configures Decode.
type Option func(*options)

type options struct{ limits Limits }

// WithLimits makes Decode apply l instead of DefaultLimits. Zero fields of l
// keep their default; MaxDepth is capped at 10000.
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l } }
