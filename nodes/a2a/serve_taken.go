package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ilmek-go/ilmek/internal/resent"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// What a Server keeps of a message beyond its process: when its
// checkpointer keeps thread records (the memory checkpointer, SQLite,
// PostgreSQL), the run a message with an id starts or resumes records the
// message's id and the digest of its parts in the thread's metadata, with
// the run's first checkpoint. A message sent again that the Server's
// memory does not hold (the process restarted, or another replica took
// it) is found there, by the thread's key: it is answered from where the
// thread stands, and a run the message started that a dead process cut
// short is continued from its latest checkpoint, never started again. A
// message with an id and no context gets a context derived from its id,
// so that the message sent again finds the same thread.

// Thread metadata keys of a Server.
const (
	// MetaMessage is the id of the last message with an id that started
	// or resumed a run of the thread.
	MetaMessage = "a2a.message"
	// MetaDigest is the digest of that message's parts (and task id).
	MetaDigest = "a2a.digest"
)

// sent is a message/send's message as a run records it: its id and its
// digest in hex ("" for a message without an id).
type sent struct{ id, digest string }

// digestOf is the digest of a message with its task id and encoded parts.
func digestOf(taskID string, parts []byte) [sha256.Size]byte {
	return sha256.Sum256(append([]byte(taskID+"\x00"), parts...))
}

// contextFor is the context (thread) id of a message with id messageID
// that names no context: the same each time it is sent.
func contextFor(messageID string) string {
	sum := sha256.Sum256([]byte("a2a context\x00" + messageID))
	return "m-" + hex.EncodeToString(sum[:16])
}

// threadRecords is a checkpointer that keeps thread records.
type threadRecords interface {
	checkpoint.ThreadLister
	checkpoint.ThreadRecorder
}

// takenBefore reads whether message m was taken on thread before: its id
// in the thread's record (nil when it was not). latest is the thread's
// latest checkpoint ("" for none), read before the record, which a new run
// of m expects (runtime.WithExpectedLatest): a replica that took m after
// this read leaves the thread moved, and this run is refused rather than
// run twice. The same id with other parts is CodeInvalidParams.
func takenBefore(ctx context.Context, cp runtime.Checkpointer, thread string, m sent) (latest string, info *checkpoint.ThreadInfo, err error) {
	latest, info, err = resent.Read(ctx, cp, thread)
	switch {
	case err != nil:
		return "", nil, err
	case info == nil || info.Meta[MetaMessage] != m.id:
		return latest, nil, nil
	case info.Meta[MetaDigest] != m.digest:
		return "", nil, otherParts(m.id)
	}
	return latest, info, nil
}

// otherParts is the error of a message id sent before with other parts.
func otherParts(id string) error {
	return &RPCError{Method: "message/send", Code: CodeInvalidParams,
		Message: fmt.Sprintf("message id %q was sent before on this context with other parts; give each message an id of its own and send a message again under its first id only", id)}
}

// answerAgain answers a message sent again that was taken before on
// thread th (info, its record, names it), from where th stands
// (resent.Answer): a run the message started or resumed that a dead
// process cut short is continued; otherwise th's state, open interrupts
// or last failure is the answer, as the first sending's was.
func answerAgain[S, U any](ctx context.Context, s *Server, th *runtime.Thread[S, U], info *checkpoint.ThreadInfo, output func(S) string) (*Task, error) {
	res, err := resent.Answer(ctx, th, info.Outcome)
	if err != nil && res.Status == "" {
		return nil, refused(err)
	}
	// The task the first sending answered with, when its run recorded it.
	taskID := info.Meta[MetaTask]
	if c, ok := contextOfTask(taskID); !ok || c != th.ID() {
		taskID = s.taskFor(th.ID())
	}
	return s.taskOf(taskID, th.ID(), res.Status, res.Pending, res.Err, func() string { return output(res.State) }), nil
}
