// Package otel turns ilmek runs into OpenTelemetry traces and metrics. It
// is a module of its own (github.com/ilmek-go/ilmek/otel), so the core
// module does not depend on OpenTelemetry.
//
// An Observer is a runtime.Observer: add it to a graph with
// runtime.WithObserver or to one run with runtime.WithObserver.
//
//	import (
//		ilmekotel "github.com/ilmek-go/ilmek/otel"
//		"github.com/ilmek-go/ilmek/runtime"
//	)
//
//	obs, err := ilmekotel.New(
//		ilmekotel.WithTracerProvider(tp), // default: otel.GetTracerProvider()
//		ilmekotel.WithMeterProvider(mp),  // default: otel.GetMeterProvider()
//	)
//	if err != nil {
//		return err
//	}
//	g, err := runtime.FromSpec(doc, registry, runtime.WithObserver(obs))
//	...
//	res, err := g.Thread(store, id).Invoke(ctx, input)
//
// # Spans
//
// Each run is a span, a child of the span in the context the run was
// started with, named "run <graph>". Under it:
//
//	run <graph>                 events: lease taken/renewed/lost, interrupts answered, timers fired, resume
//	  checkpoint                the run's first checkpoint (superstep 0)
//	  superstep                 one per superstep; events: interrupt opened, timer set
//	    task <node id>          one per task, every attempt; events: step executed/replayed, retry
//	      (the node's own spans, started from its Ctx)
//	    checkpoint              the superstep's commit, or its pause
//
// Task spans carry the node id, node type, task key, task id, superstep,
// the number of attempts and the outcome (done, error, interrupted). A
// journaled step is an event on its task's span: EventStepExecuted with
// the time its function ran, or EventStepReplayed when a re-run (a retry,
// or the run after a resume) returned its journaled value. A failure sets
// the span's status to Error with error.type; the span where the error
// arose (a task's, a checkpoint's, or the run's for one that did not come
// from a task) also records it as an exception event.
//
// A pause keeps the pausing run's span context with its interrupts
// (runtime.PendingInterrupt.Meta, under MetaTraceparent); the run that
// resumes the thread, which is a new trace under its own caller's span,
// links to it. The attribute, event, span and metric names are the Key,
// Event, Span and Metric constants.
//
// # Metrics
//
// Runs, supersteps, tasks (by node and outcome) and their durations,
// journaled steps executed and replayed, retries, interrupts opened and
// answered, timers set and fired and their lateness, checkpoint commit latency and size, and lost leases: see the
// Metric constants. Their attributes are the graph's name and, where it
// applies, the node's id and type, so their number is bounded by the
// graph's size; run and thread ids are on spans only.
//
// # Timers
//
// A timer (runtime.Sleep, runtime.Until) that parks its thread is an
// EventTimerSet ("ilmek.timer.set") on the pausing superstep's span, with
// KeyInterruptID, KeyNode and KeyTimerWakeAt; the wake run that takes it
// (runtime.Thread.Wake, runtime/waker, the PostgreSQL workers) adds an
// EventTimerFired ("ilmek.timer.fired") to its run span with its
// KeyTimerLateness past the wake time. They count in MetricTimersSet
// ("ilmek.timers.set"), MetricTimersFired ("ilmek.timers.fired") and
// MetricTimerLateness ("ilmek.timer.lateness", seconds), by graph and
// node, and not in the interrupt events and metrics. A wake the workers
// drop because its thread was deleted, cancelled or woken already is
// workers.EventTimerDropped: QueueObserver counts it in
// MetricQueueTimersDropped. A timer that waits in process (within
// runtime.WithParkAfter) is part of its task's span. TestTimersObserved.
//
// # Database retries
//
// The PostgreSQL store and its queue workers retry a statement that failed
// with an error safe to retry (a dropped connection, a server restart) and
// report each retry as a checkpoint.Retry. Pass Observer.Retry to
// runtime/postgres.OnRetry and runtime/postgres/workers.OnRetry: it counts
// them in MetricDBRetries ("ilmek.db.retries", by statement and error
// type) and adds an EventDBRetry event to the task's, the run's or the
// caller's span. The slog WARN line each package logs stays as it is
// (attributes op, thread or request, attempt, wait, err). TestRetry.
//
// # Schedule firings
//
// ScheduleFirings (NewScheduleFirings) records the ticks of stored
// schedules that the PostgreSQL workers or the in-process waker fired or
// skipped: pass its Record to runtime/postgres/workers.OnFiring or
// runtime/waker.WithOnFiring. Each is a SpanScheduleFiring span
// ("ilmek.schedule.firing") from the tick to the firing's record, with the
// schedule, tick, outcome, thread and request; MetricScheduleFirings
// ("ilmek.schedule.firings") counts them by schedule and outcome (fired,
// skipped) and MetricScheduleLateness ("ilmek.schedule.lateness") is how
// late they were. TestScheduleFirings.
//
// # Queue flow
//
// QueueObserver (NewQueueObserver) takes the events the queue's workers
// report through runtime/postgres/workers.OnEvent: each claim, dead
// request and rate-limit wait becomes a span (SpanQueueClaim,
// SpanQueueDead with status error, SpanQueueRateWait lasting the wait)
// and a count in MetricQueueClaims, MetricQueueDead (by graph),
// MetricQueueRateWaits and MetricQueueRateWaitTime; the pruner's deletions
// count in MetricQueuePruned. TestQueueObserver.
//
// # Cost
//
// A run without an observer pays nothing for one. With the Observer, each
// run, superstep, task and checkpoint commit costs one span; a span that
// is not sampled records nothing, and its attributes and events are not
// built (so samplers see a span's name, not its attributes). With a no-op
// tracer provider (go.opentelemetry.io/otel/trace/noop) the Observer
// starts no spans and only counts its metrics, whose attribute sets are
// built once per graph and node. BENCHMARKS.md has the figures.
package otel
