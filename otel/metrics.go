package otel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments are the Observer's metrics (the Metric constants name them).
type instruments struct {
	runs, supersteps, tasks, steps, retries       metric.Int64Counter
	interruptsOpened, interruptsAnswered          metric.Int64Counter
	leaseLosses, dbRetries                        metric.Int64Counter
	timersSet, timersFired                        metric.Int64Counter
	timerLateness                                 metric.Float64Histogram
	runDuration, taskDuration, checkpointDuration metric.Float64Histogram
	checkpointSize                                metric.Int64Histogram
}

// durationBounds are the bucket bounds of the duration histograms, in
// seconds: from a tenth of a millisecond (a task that only computes) to a
// minute (one that waits on a model or a person's system).
var durationBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// sizeBounds are the bucket bounds of the checkpoint size histogram, in
// bytes.
var sizeBounds = []float64{256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}

func (in *instruments) init(m metric.Meter) error {
	var errs [16]error
	in.runs, errs[0] = m.Int64Counter(MetricRuns, metric.WithUnit("{run}"), metric.WithDescription("Runs ended, by status."))
	in.runDuration, errs[1] = m.Float64Histogram(MetricRunDuration, metric.WithUnit("s"), metric.WithDescription("How long runs took, by status."),
		metric.WithExplicitBucketBoundaries(durationBounds...))
	in.supersteps, errs[2] = m.Int64Counter(MetricSupersteps, metric.WithUnit("{superstep}"), metric.WithDescription("Supersteps run."))
	in.tasks, errs[3] = m.Int64Counter(MetricTasks, metric.WithUnit("{task}"), metric.WithDescription("Tasks ended, by node and outcome."))
	in.taskDuration, errs[4] = m.Float64Histogram(MetricTaskDuration, metric.WithUnit("s"),
		metric.WithDescription("How long tasks took, every attempt and the waits between them included, by node and outcome."),
		metric.WithExplicitBucketBoundaries(durationBounds...))
	in.steps, errs[5] = m.Int64Counter(MetricSteps, metric.WithUnit("{step}"),
		metric.WithDescription("Journaled steps, executed or replayed from the journal, by node."))
	in.retries, errs[6] = m.Int64Counter(MetricRetries, metric.WithUnit("{retry}"), metric.WithDescription("Failed task attempts that a retry policy re-ran, by node."))
	in.interruptsOpened, errs[7] = m.Int64Counter(MetricInterruptsOpened, metric.WithUnit("{interrupt}"), metric.WithDescription("Interrupts written by pauses, by node."))
	in.interruptsAnswered, errs[8] = m.Int64Counter(MetricInterruptsAnswered, metric.WithUnit("{interrupt}"), metric.WithDescription("Interrupts answered by resumes, by node."))
	in.checkpointDuration, errs[9] = m.Float64Histogram(MetricCheckpointDuration, metric.WithUnit("s"),
		metric.WithDescription("How long checkpoint commits took, failed ones with error.type."), metric.WithExplicitBucketBoundaries(durationBounds...))
	in.checkpointSize, errs[10] = m.Int64Histogram(MetricCheckpointSize, metric.WithUnit("By"),
		metric.WithDescription("What committed checkpoints wrote: channels, send inputs and interrupt payloads as encoded."),
		metric.WithExplicitBucketBoundaries(sizeBounds...))
	in.leaseLosses, errs[11] = m.Int64Counter(MetricLeaseLosses, metric.WithUnit("{loss}"), metric.WithDescription("Thread leases lost while a run held them."))
	in.dbRetries, errs[12] = m.Int64Counter(MetricDBRetries, metric.WithUnit("{retry}"),
		metric.WithDescription("Database statements retried after an error safe to retry, by statement."))
	in.timersSet, errs[13] = m.Int64Counter(MetricTimersSet, metric.WithUnit("{timer}"), metric.WithDescription("Timers (Sleep, Until) that parked their thread, by node."))
	in.timersFired, errs[14] = m.Int64Counter(MetricTimersFired, metric.WithUnit("{timer}"), metric.WithDescription("Parked timers taken by the wake run of their thread, by node."))
	in.timerLateness, errs[15] = m.Float64Histogram(MetricTimerLateness, metric.WithUnit("s"),
		metric.WithDescription("How long after its wake time a parked timer's wake run took it, by node."), metric.WithExplicitBucketBoundaries(durationBounds...))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// attrKey names one set of metric attributes; empty fields are left out.
type attrKey struct {
	graph, node, nodeType string
	outcome               string // KeyTaskOutcome or KeyRunStatus (a key without node)
	step                  int8   // 1: an executed step, 2: a replayed one
	checkpoint            bool   // KeyCheckpointPause is set
	pause                 bool
	errType               string
}

// attrEntry is one set of metric attributes as the options of a
// measurement, built once, so that a measurement allocates nothing.
type attrEntry struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newAttrEntry(k attrKey) attrEntry {
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, KeyGraph.String(k.graph))
	if k.node != "" {
		attrs = append(attrs, KeyNode.String(k.node))
	}
	if k.nodeType != "" {
		attrs = append(attrs, KeyNodeType.String(k.nodeType))
	}
	if k.outcome != "" {
		if k.node != "" {
			attrs = append(attrs, KeyTaskOutcome.String(k.outcome))
		} else {
			attrs = append(attrs, KeyRunStatus.String(k.outcome))
		}
	}
	if k.step != 0 {
		attrs = append(attrs, KeyStepReplayed.Bool(k.step == 2))
	}
	if k.checkpoint {
		attrs = append(attrs, KeyCheckpointPause.Bool(k.pause))
	}
	if k.errType != "" {
		attrs = append(attrs, KeyErrorType.String(k.errType))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(attrs...))
	return attrEntry{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
}

// The outcomes of a task, indexes of nodeEntry.outcomes.
const (
	outcomeDone = iota
	outcomeError
	outcomeInterrupted
)

var outcomeNames = [...]string{outcomeDone: "done", outcomeError: "error", outcomeInterrupted: "interrupted"}

// graphEntry is what the Observer keeps per graph name.
type graphEntry struct {
	attrEntry        // the graph
	name      string // the graph's name
	spanName  string // its runs' span name
}

// nodeEntry is what the Observer keeps per node of a graph.
type nodeEntry struct {
	attrEntry                 // graph, node, node type
	spanName           string // its tasks' span name
	outcomes           [len(outcomeNames)]attrEntry
	executed, replayed attrEntry // steps: graph, node, replayed
}

// attrCache keeps the attribute sets of the metrics and the span names,
// so that a run builds none. Its maps are copied on write: the tasks of a
// fan-out read them at once on every core, and a read takes no lock and
// writes no shared memory. Each map holds one entry per graph, node or
// attribute combination, so writes stop once every node has run.
type attrCache struct {
	mu     sync.Mutex // serializes writers
	m      atomic.Pointer[map[attrKey]*attrEntry]
	graphs atomic.Pointer[map[string]*graphEntry]
	nodes  atomic.Pointer[map[[3]string]*nodeEntry]
}

// lookup returns the entry of k in the copy-on-write map p, made by build
// the first time.
func lookup[K comparable, V any](mu *sync.Mutex, p *atomic.Pointer[map[K]*V], k K, build func() *V) *V {
	if m := p.Load(); m != nil {
		if e := (*m)[k]; e != nil {
			return e
		}
	}
	mu.Lock()
	defer mu.Unlock()
	old := p.Load()
	if old != nil {
		if e := (*old)[k]; e != nil {
			return e
		}
	}
	m := build()
	next := map[K]*V{k: m}
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	p.Store(&next)
	return m
}

// get returns the entry of k.
func (c *attrCache) get(k attrKey) *attrEntry {
	return lookup(&c.mu, &c.m, k, func() *attrEntry {
		e := newAttrEntry(k)
		return &e
	})
}

// graph returns the entry of the graph named name.
func (c *attrCache) graph(name string) *graphEntry {
	return lookup(&c.mu, &c.graphs, name, func() *graphEntry {
		return &graphEntry{attrEntry: newAttrEntry(attrKey{graph: name}), name: name, spanName: SpanRun + " " + name}
	})
}

// node returns the entry of node id (of type typ) of graph.
func (c *attrCache) node(graph, id, typ string) *nodeEntry {
	return lookup(&c.mu, &c.nodes, [3]string{graph, id, typ}, func() *nodeEntry {
		base := attrKey{graph: graph, node: id, nodeType: typ}
		e := &nodeEntry{attrEntry: newAttrEntry(base), spanName: SpanTask + " " + id}
		for i, name := range outcomeNames {
			k := base
			k.outcome = name
			e.outcomes[i] = newAttrEntry(k)
		}
		e.executed = newAttrEntry(attrKey{graph: graph, node: id, step: 1})
		e.replayed = newAttrEntry(attrKey{graph: graph, node: id, step: 2})
		return e
	})
}
