package mcpsdk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ilmek-go/ilmek/internal/resent"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// A call of a graph tool that carries an idempotency key in its _meta
// (mcp.MetaIdempotencyKey, as the mcp package's Toolbox.Call sends the
// step's id) is answered once: the same key again, after its answer was
// lost, gets where the call's thread stands, and a run a dead process cut
// short is continued from its latest checkpoint, not started again. The
// run tool runs such a call on a thread named after its key (so that it is
// found again); the resume tool records the key in the thread's metadata,
// which needs a store that keeps thread records. The run of a call with a
// key goes on when its caller goes away, so that the call made again
// finds its answer.

// Thread metadata keys of a graph tool's call with an idempotency key.
const (
	// MetaCall is the key of the last call with an idempotency key that
	// started or resumed a run of the thread.
	MetaCall = "mcp.call"
	// MetaDigest is the digest of that call's tool and arguments.
	MetaDigest = "mcp.digest"
)

// keyed is a tool call with an idempotency key: the key, and the digest
// of its tool's name and arguments in hex.
type keyed struct{ key, digest string }

// inFlight holds the threads on which a keyed call runs in this process,
// each with a channel closed when it ends: a call made again meanwhile
// waits for that end and is answered from it, rather than refused as
// the thread is busy.
type inFlight struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// enter waits until no keyed call runs on thread in this process, and
// marks one as running; leave, which the caller defers, unmarks it. It
// fails only when ctx ends first.
func (f *inFlight) enter(ctx context.Context, thread string) (leave func(), err error) {
	for {
		f.mu.Lock()
		done, busy := f.m[thread]
		if !busy {
			if f.m == nil {
				f.m = map[string]chan struct{}{}
			}
			done = make(chan struct{})
			f.m[thread] = done
			f.mu.Unlock()
			return func() {
				f.mu.Lock()
				delete(f.m, thread)
				f.mu.Unlock()
				close(done)
			}, nil
		}
		f.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// keyOf returns the idempotency key of a call of tool and its digest; ok
// is false for a call without a key.
func keyOf(tool string, req *sdk.CallToolRequest) (keyed, bool) {
	if req == nil || req.Params == nil {
		return keyed{}, false
	}
	key, _ := req.Params.Meta[mcp.MetaIdempotencyKey].(string)
	if key == "" {
		return keyed{}, false
	}
	var args bytes.Buffer
	if json.Compact(&args, req.Params.Arguments) != nil {
		args.Reset()
		args.Write(req.Params.Arguments)
	}
	sum := sha256.Sum256(append([]byte(tool+"\x00"), args.Bytes()...))
	return keyed{key, hex.EncodeToString(sum[:])}, true
}

// threadOf is the thread of a run tool's call with key k: the same each
// time the call is made.
func (k keyed) threadOf(tool string) string {
	sum := sha256.Sum256([]byte("mcp call\x00" + tool + "\x00" + k.key))
	return "k-" + hex.EncodeToString(sum[:16])
}

// once runs a call with key k on thread th, or answers it from where th
// stands when a call under k was taken there before, one keyed call of th
// at a time in this process (f). ranBefore says, from
// th's latest checkpoint ("" for none) and record (nil when the store
// keeps none), whether it was; run starts the call's run with the options
// that record k and expect the checkpoint read.
func once[S, U any](ctx context.Context, name string, th *runtime.Thread[S, U], cp runtime.Checkpointer, k keyed, f *inFlight,
	ranBefore func(latest string, info *checkpoint.ThreadInfo) bool,
	run func(ctx context.Context, opts ...runtime.RunOption) (runtime.Result[S], error)) (*sdk.CallToolResult, any, error) {
	leave, err := f.enter(ctx, th.ID())
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	latest, info, err := resent.Read(ctx, cp, th.ID())
	if err != nil {
		return nil, nil, err
	}
	if ranBefore(latest, info) {
		var outcome checkpoint.ThreadOutcome
		if info != nil {
			// (A later call under another key, a resume, leaves its own.)
			if info.Meta[MetaCall] == k.key && info.Meta[MetaDigest] != k.digest {
				return nil, nil, fmt.Errorf("mcpsdk: %s: idempotency key %q was used before with other arguments; give each call a key of its own, and make a call again under its first key only", name, k.key)
			}
			outcome = info.Outcome
		}
		res, err := resent.Answer(detached(ctx), th, outcome)
		return result(name, th.ID(), res, err)
	}
	opts := []runtime.RunOption{runtime.WithExpectedLatest(latest)}
	if _, ok := cp.(checkpoint.ThreadRecorder); ok {
		opts = append(opts, runtime.WithThreadMeta(map[string]string{MetaCall: k.key, MetaDigest: k.digest}))
	}
	res, err := run(detached(ctx), opts...)
	return result(name, th.ID(), res, err)
}

// detached is ctx without its cancellation: the run of a call with a key
// goes on when its caller goes away (a dropped connection).
func detached(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
