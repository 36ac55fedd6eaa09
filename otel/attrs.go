package otel

import "go.opentelemetry.io/otel/attribute"

// The attribute keys the Observer sets on spans, span events and metrics.
// OpenTelemetry's semantic conventions have no names for graph runs,
// supersteps, tasks or checkpoints, so these are under the ilmek. prefix;
// where a convention exists it is used instead: error.type (the Go type of
// a failure's error) on failed spans and on the metrics of failures, and
// exception events (Span.RecordError) for errors.
const (
	// KeyGraph is the graph's name (runtime.Shape.Name). On spans and on
	// every metric.
	KeyGraph = attribute.Key("ilmek.graph.name")
	// KeyRunID is the run's id (runtime.Result.RunID). Spans only.
	KeyRunID = attribute.Key("ilmek.run.id")
	// KeyThreadID is the run's thread ("" without a thread: not set).
	// Spans only.
	KeyThreadID = attribute.Key("ilmek.thread.id")
	// KeyResume is true on the span of a run started by Resume.
	KeyResume = attribute.Key("ilmek.run.resume")
	// KeyRunStatus is how a run ended (done, interrupted, error, aborted;
	// "refused" for a run refused before it started). On the run span and
	// on ilmek.runs and ilmek.run.duration.
	KeyRunStatus = attribute.Key("ilmek.run.status")
	// KeySupersteps is the number of supersteps a run took.
	KeySupersteps = attribute.Key("ilmek.run.supersteps")
	// KeySuperstep is the thread's superstep counter: of a superstep, of a
	// task's superstep, or the superstep a checkpoint records (a pause's
	// checkpoint records the last committed one, so it is the pausing
	// superstep's less one).
	KeySuperstep = attribute.Key("ilmek.superstep")
	// KeySuperstepTasks is the number of tasks a superstep runs.
	KeySuperstepTasks = attribute.Key("ilmek.superstep.tasks")
	// KeyNode is a node's id. On task spans, interrupt events and the task,
	// step, retry and interrupt metrics.
	KeyNode = attribute.Key("ilmek.node.id")
	// KeyNodeType is a node's registry type (not set for a code node).
	KeyNodeType = attribute.Key("ilmek.node.type")
	// KeyTaskKey is a task's key: the node id, or node#n for a send.
	KeyTaskKey = attribute.Key("ilmek.task.key")
	// KeyTaskID is a task's id within its thread (it names its journal).
	KeyTaskID = attribute.Key("ilmek.task.id")
	// KeyAttempt is, on a task span, how many times its body ran; on a
	// retry event, the attempt that failed (from 1).
	KeyAttempt = attribute.Key("ilmek.task.attempt")
	// KeyBackoff is a retry's wait before the next attempt, in seconds.
	KeyBackoff = attribute.Key("ilmek.task.backoff")
	// KeyTaskOutcome is how a task ended: done, error or interrupted. On
	// task spans and on ilmek.tasks and ilmek.task.duration.
	KeyTaskOutcome = attribute.Key("ilmek.task.outcome")
	// KeyStepKey is a journaled step's full key, e.g. charge#0.
	KeyStepKey = attribute.Key("ilmek.step.key")
	// KeyStepReplayed is true for a step whose journaled value was
	// returned without running it. On step events and on ilmek.steps.
	KeyStepReplayed = attribute.Key("ilmek.step.replayed")
	// KeyStepDuration is how long an executed step's function ran, in
	// seconds.
	KeyStepDuration = attribute.Key("ilmek.step.duration")
	// KeyInterruptID is an interrupt's id (<task key>:<interrupt key>).
	KeyInterruptID = attribute.Key("ilmek.interrupt.id")
	// KeyResumeAccepted says whether a resume was accepted.
	KeyResumeAccepted = attribute.Key("ilmek.resume.accepted")
	// KeyResumeReason is why a resume was refused.
	KeyResumeReason = attribute.Key("ilmek.resume.reason")
	// KeyCheckpointID is a checkpoint's id.
	KeyCheckpointID = attribute.Key("ilmek.checkpoint.id")
	// KeyCheckpointPause is true for the checkpoint of a pause. On
	// checkpoint spans and the checkpoint metrics.
	KeyCheckpointPause = attribute.Key("ilmek.checkpoint.pause")
	// KeyCheckpointBytes is the size of what a checkpoint wrote: channels,
	// send inputs and interrupt payloads as encoded.
	KeyCheckpointBytes = attribute.Key("ilmek.checkpoint.bytes")
	// KeyLinkKind says why a run span links to another span: "paused run"
	// on the link of a resumed run to the run that paused.
	KeyLinkKind = attribute.Key("ilmek.link.kind")
	// KeyRetryOp is a retried database statement (checkpoint.Retry.Op):
	// "commit", "journal", "renew lease", "claim", "finish", ...
	KeyRetryOp = attribute.Key("ilmek.retry.op")
	// KeyRetryAttempt is the number of a retried statement's failed
	// attempt, from 1 (events only).
	KeyRetryAttempt = attribute.Key("ilmek.retry.attempt")
	// KeyRetryWait is the pause before a retried statement's next
	// attempt, in seconds (events only).
	KeyRetryWait = attribute.Key("ilmek.retry.wait")
	// KeyTimerWakeAt is a parked timer's wake time, RFC 3339 (timer
	// events).
	KeyTimerWakeAt = attribute.Key("ilmek.timer.wake_at")
	// KeyTimerLateness is how long after its wake time a timer fired, in
	// seconds (EventTimerFired).
	KeyTimerLateness = attribute.Key("ilmek.timer.lateness")
	// KeyRequestID is a queue request's id (events only).
	KeyRequestID = attribute.Key("ilmek.queue.request")
	// KeyErrorType is the semantic conventions' error.type: the Go type of
	// a failure's error (its innermost *runtime.NodeError unwrapped), or
	// _OTHER.
	KeyErrorType = attribute.Key("error.type")
)

// The names of the span events the Observer adds.
const (
	// EventStepExecuted is a journaled step whose function ran (task span).
	EventStepExecuted = "ilmek.step.executed"
	// EventStepReplayed is a journaled step returned from the journal
	// without running (task span).
	EventStepReplayed = "ilmek.step.replayed"
	// EventRetry is a failed attempt the node's retry policy re-runs (task
	// span).
	EventRetry = "ilmek.task.retry"
	// EventInterruptOpened is an interrupt a pause wrote (superstep span).
	EventInterruptOpened = "ilmek.interrupt.opened"
	// EventInterruptAnswered is an answer a resume journaled (run span).
	EventInterruptAnswered = "ilmek.interrupt.answered"
	// EventTimerSet is a timer (runtime.Sleep, runtime.Until) that parked
	// its thread, with its wake time (superstep span; it is not an
	// EventInterruptOpened).
	EventTimerSet = "ilmek.timer.set"
	// EventTimerFired is a parked timer the wake run took, with its
	// lateness (run span of the wake; not an EventInterruptAnswered).
	EventTimerFired = "ilmek.timer.fired"
	// EventResume is a resume accepted or refused (run span).
	EventResume = "ilmek.resume"
	// EventLeaseTaken, EventLeaseRenewed and EventLeaseLost are the
	// thread's lease events (run span).
	EventLeaseTaken   = "ilmek.lease.taken"
	EventLeaseRenewed = "ilmek.lease.renewed"
	EventLeaseLost    = "ilmek.lease.lost"
	// EventDBRetry is a database statement retried after an error safe
	// to retry (Observer.Retry): on the task's span, else the run's, else
	// the span in the statement's context.
	EventDBRetry = "ilmek.db.retry"
)

// The names of the spans: "run <graph>", "superstep", "task <node id>",
// "checkpoint".
const (
	SpanRun        = "run"
	SpanSuperstep  = "superstep"
	SpanTask       = "task"
	SpanCheckpoint = "checkpoint"
)

// The metric names and what each counts. Durations are in seconds,
// sizes in bytes. Every metric has KeyGraph; the rest is noted.
const (
	MetricRuns               = "ilmek.runs"                // counter {run}: KeyRunStatus
	MetricRunDuration        = "ilmek.run.duration"        // histogram s: KeyRunStatus
	MetricSupersteps         = "ilmek.supersteps"          // counter {superstep}
	MetricTasks              = "ilmek.tasks"               // counter {task}: node, node type, outcome
	MetricTaskDuration       = "ilmek.task.duration"       // histogram s: node, node type, outcome
	MetricSteps              = "ilmek.steps"               // counter {step}: node, KeyStepReplayed
	MetricRetries            = "ilmek.task.retries"        // counter {retry}: node, node type
	MetricInterruptsOpened   = "ilmek.interrupts.opened"   // counter {interrupt}: node
	MetricInterruptsAnswered = "ilmek.interrupts.answered" // counter {interrupt}: node
	MetricCheckpointDuration = "ilmek.checkpoint.duration" // histogram s: KeyCheckpointPause, error.type on failure
	MetricCheckpointSize     = "ilmek.checkpoint.size"     // histogram By: KeyCheckpointPause
	MetricLeaseLosses        = "ilmek.lease.losses"        // counter {loss}
	MetricTimersSet          = "ilmek.timers.set"          // counter {timer}: node (parked timers; not in interrupts.opened)
	MetricTimersFired        = "ilmek.timers.fired"        // counter {timer}: node (taken by a wake; not in interrupts.answered)
	MetricTimerLateness      = "ilmek.timer.lateness"      // histogram s: node (a fired timer's wake run past its wake time)
	// MetricDBRetries counts Observer.Retry's retries of a store's or a
	// worker's database statement: KeyRetryOp and error.type, and
	// KeyGraph only when the statement was a run's (a worker's is not).
	MetricDBRetries = "ilmek.db.retries" // counter {retry}
)
