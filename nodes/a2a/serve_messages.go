package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// A caller that lost the answer to a message/send (its connection
// dropped, its process died before it journaled the answer) sends the
// message again under the same message id, as Agent.Send does. The
// Server keeps, for its last MaxTasks messages, what each one answered,
// and answers a message sent again on the same context with the same
// parts with that answer instead of running the graph again: the run's
// effects happen once. A message sent again while its first sending still
// runs waits for that run's answer. The run of a message with an id does
// not stop when its caller goes away (a dropped connection cancels the
// request's context): it runs to its end, so that the message sent again
// finds its answer, not a run cut short.

// answered is a message the Server took: its parts' digest, and once its
// run ended (done closed), the task it answered with or its error.
type answered struct {
	digest [sha256.Size]byte
	done   chan struct{}
	task   *Task
	err    error
}

// messageWrite is one entry of Server.msgOrder: the key of a message and
// its record, the oldest first.
type messageWrite struct {
	key string
	a   *answered
}

// sendOnce answers m, a message with an id: with the answer it was given
// when it was sent before on its context with the same parts, else by
// taking it (take, given a context without ctx's cancellation) and keeping
// the answer. A message whose first sending failed before it ran (a
// JSON-RPC error) is taken again. The caller stops waiting when ctx ends;
// the run goes on.
func (s *Server) sendOnce(ctx context.Context, m Message, take func(context.Context, sent) (*Task, error)) (*Task, error) {
	key := m.ContextID + "\x00" + m.MessageID
	parts, _ := json.Marshal(m.Parts)
	digest := digestOf(m.TaskID, parts)
	s.mu.Lock()
	if a, ok := s.msgs[key]; ok {
		s.mu.Unlock()
		if a.digest != digest {
			return nil, otherParts(m.MessageID)
		}
		return a.wait(ctx)
	}
	a := &answered{digest: digest, done: make(chan struct{})}
	s.msgs[key] = a
	s.msgOrder = append(s.msgOrder, messageWrite{key, a})
	s.dropMessages()
	s.mu.Unlock()

	run := context.WithoutCancel(ctx)
	go func() {
		t, err := take(run, sent{m.MessageID, hex.EncodeToString(digest[:])})
		s.mu.Lock()
		a.task, a.err = t, err
		if err != nil && s.msgs[key] == a {
			delete(s.msgs, key) // nothing ran: a later sending takes it
		}
		s.mu.Unlock()
		close(a.done)
	}()
	return a.wait(ctx)
}

// wait returns a's answer once its run ended, or ctx's error first.
func (a *answered) wait(ctx context.Context) (*Task, error) {
	select {
	case <-a.done:
		return a.task, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dropMessages forgets the messages taken longest ago past s.max, and
// sheds the order's entries of messages already forgotten. It is called
// with s.mu held; each call costs O(1), amortized.
func (s *Server) dropMessages() {
	for len(s.msgs) > s.max {
		w := s.msgOrder[0]
		s.msgOrder[0] = messageWrite{}
		s.msgOrder = s.msgOrder[1:]
		if s.msgs[w.key] == w.a {
			delete(s.msgs, w.key)
		}
	}
	s.msgOrder = shed(s.msgOrder, s.max, len(s.msgs), func(w messageWrite) bool { return s.msgs[w.key] == w.a })
}
