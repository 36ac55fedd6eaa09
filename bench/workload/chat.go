package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// ChatResult is what one chat thread measured.
type ChatResult struct {
	Turns int
	// NSPerTurn is the wall time of the thread divided by its turns.
	NSPerTurn float64
	// BytesLastTurn is what the last turn's runs handed the checkpointer
	// (encoded bytes, as Observer.CheckpointCommit reports them).
	BytesLastTurn int
	// BytesPerTurn is the same, averaged over every turn.
	BytesPerTurn float64
	// FileBytes is the SQLite file's size after Close (0 for memory).
	FileBytes int64
	// NSTurns100to199 is the mean wall time of turns 100 to 199 (0 for a
	// thread of fewer turns), NSLast100 that of its last 100 turns: a
	// turn's cost flat in the conversation's length keeps them close.
	NSTurns100to199, NSLast100 float64
}

// chatBytes sums the encoded bytes a run hands the checkpointer.
type chatBytes struct {
	runtime.NopObserver
	n int
}

func (c *chatBytes) CheckpointCommit(_ context.Context, _ runtime.RunRecord, r runtime.CheckpointRecord) {
	c.n += r.Bytes
}

// Chat runs the chat workload on ckpt ("memory" or "sqlite", in a new file
// under dir): one thread of turns turns, each a run whose input appends
// one 100-byte message to an append channel; every tenth turn the
// assistant node pauses for a person and the turn ends with the resume.
func Chat(ctx context.Context, ckpt, dir string, turns int) (ChatResult, error) {
	g, err := runtime.NewBuilder("chat").Channel("messages", spec.Append).Channel("turns", "").
		Node("assistant", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			l, _ := s["messages"].([]any)
			if len(l)%10 == 0 {
				if _, err := runtime.Interrupt[bool](ctx, "go on?"); err != nil {
					return nil, err
				}
			}
			return runtime.Values{"turns": len(l)}, nil
		}).
		Edge(spec.Start, "assistant").Edge("assistant", spec.End).Compile()
	if err != nil {
		return ChatResult{}, err
	}
	var (
		cp    runtime.Checkpointer
		store *sqlite.Store
		path  string
	)
	switch ckpt {
	case "memory":
		cp = checkpoint.NewMemory()
	case "sqlite":
		d, err := os.MkdirTemp(dir, "ilmek-chat-")
		if err != nil {
			return ChatResult{}, err
		}
		defer os.RemoveAll(d)
		path = filepath.Join(d, "chat.db")
		if store, err = sqlite.Open(path); err != nil {
			return ChatResult{}, err
		}
		defer store.Close()
		cp = store
	default:
		return ChatResult{}, fmt.Errorf("chat: checkpointer %q: want memory or sqlite", ckpt)
	}
	obs := &chatBytes{}
	opts, th := []runtime.RunOption{runtime.WithObserver(obs)}, g.Thread(cp, "chat")
	res := ChatResult{Turns: turns}
	total := 0
	start := time.Now()
	took := make([]time.Duration, turns+1) // by turn
	for turn := 1; turn <= turns; turn++ {
		obs.n = 0
		t0 := time.Now()
		msg := fmt.Sprintf("turn %d %s", turn, strings.Repeat("x", 100))[:100]
		out, err := th.Invoke(ctx, runtime.Values{"messages": msg}, opts...)
		if err == nil && out.Status == runtime.StatusInterrupted {
			out, err = th.Resume(ctx, runtime.Answer(true), opts...)
		}
		if err != nil || out.Status != runtime.StatusDone {
			return res, fmt.Errorf("chat turn %d: %s %v", turn, out.Status, err)
		}
		took[turn] = time.Since(t0)
		res.BytesLastTurn = obs.n
		total += obs.n
	}
	res.NSPerTurn = float64(time.Since(start).Nanoseconds()) / float64(turns)
	if turns >= 199 {
		res.NSTurns100to199 = meanNS(took[100:200])
	}
	if turns >= 100 {
		res.NSLast100 = meanNS(took[turns-99:])
	}
	res.BytesPerTurn = float64(total) / float64(turns)
	if store != nil {
		if err := store.Close(); err != nil {
			return res, err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return res, err
		}
		res.FileBytes = fi.Size()
	}
	return res, nil
}

// meanNS is the mean of ds in nanoseconds.
func meanNS(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum.Nanoseconds()) / float64(len(ds))
}
