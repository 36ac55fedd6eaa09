package workers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notifications on the queue's channel (NOTIFY, sent when the writing
// transaction commits) tell listeners what changed, so idle workers and
// waiting callers react at once instead of on their next poll. Polling
// stays as the safety net: a notification sent while a listener was
// reconnecting is lost, and an expired claim sends none.
const (
	noteNew    = "new:"    // + id: a request was queued
	noteEnd    = "end:"    // + id: a request ended
	noteCancel = "cancel:" // + id: a running request was asked to stop
)

// channel is the NOTIFY channel of the queue in schema: "ilmek:" and the
// schema name, or a hash of it when that would pass PostgreSQL's 63-byte
// identifier limit.
func channel(schema string) string {
	ch := "ilmek:" + schema
	if len(ch) > 63 {
		sum := sha256.Sum256([]byte(schema))
		ch = "ilmek:" + hex.EncodeToString(sum[:16])
	}
	return ch
}

// notify queues a notification to be sent when tx commits.
func (q *Queue) notify(ctx context.Context, tx pgx.Tx, payload string) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", q.ch, payload)
	return err
}

// listen holds a connection of its own (outside the store's pool, so a
// listener never takes a connection the runs need) that LISTENs on the
// queue's channel, and calls fn with each notification's payload until ctx
// is done. After a failure it reconnects with a growing pause, up to
// max; connected is called after each successful LISTEN, so the caller can
// re-read what it may have missed.
func (q *Queue) listen(ctx context.Context, fn func(payload string), connected func()) {
	pause := 50 * time.Millisecond
	const max = 2 * time.Second
	for ctx.Err() == nil {
		if q.listenOnce(ctx, fn, connected) {
			pause = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, max)
	}
}

// listenOnce connects, listens and delivers until an error; it reports
// whether it got as far as listening.
func (q *Queue) listenOnce(ctx context.Context, fn func(string), connected func()) bool {
	conn, err := pgx.ConnectConfig(ctx, q.store.Pool().Config().ConnConfig.Copy())
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{q.ch}.Sanitize()); err != nil {
		return false
	}
	if connected != nil {
		connected()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		fn(n.Payload)
	}
}

// waiters fans the queue's end notifications out to the callers of Wait.
// One listener runs while anyone waits; it stops listenLinger after the
// last left, so a caller waiting for one request after another does not
// connect each time.
type waiters struct {
	mu   sync.Mutex
	byID map[int64][]*waiter
	// recording counts the requests whose outcome a worker of this
	// process is recording: their end notifications, which can arrive
	// before the worker has its statement's reply, wake nobody; the
	// worker wakes the waiters itself (recorded).
	recording map[int64]int
	n         int
	cancel    context.CancelFunc // stops the listener; nil when none runs
	idle      *time.Timer        // stops it once nobody waits
}

// A waiter is one call of Wait: its channel is signalled when the
// request may have ended, and out holds the outcome when a worker of this
// process recorded it (deliverOutcome), so that Wait need not read it
// back. Both under waiters.mu.
type waiter struct {
	ch  chan struct{}
	out *Outcome
}

// listenLinger is how long Wait's listener outlives its last waiter.
const listenLinger = 2 * time.Second

// addWaiter registers a waiter for request id and returns it, and the
// function that unregisters it.
func (q *Queue) addWaiter(id int64) (*waiter, func()) {
	w := &q.waiters
	wt := &waiter{ch: make(chan struct{}, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID == nil {
		w.byID = map[int64][]*waiter{}
	}
	w.byID[id] = append(w.byID[id], wt)
	w.n++
	if w.idle != nil {
		w.idle.Stop()
		w.idle = nil
	}
	if w.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		go q.listen(ctx, q.deliverEnd, q.wakeAllWaiters)
	}
	return wt, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		l := w.byID[id]
		for i := range l {
			if l[i] == wt {
				l = append(l[:i], l[i+1:]...)
				break
			}
		}
		if len(l) == 0 {
			delete(w.byID, id)
		} else {
			w.byID[id] = l
		}
		w.n--
		if w.n == 0 {
			w.idle = time.AfterFunc(listenLinger, func() {
				w.mu.Lock()
				defer w.mu.Unlock()
				if w.n == 0 && w.cancel != nil {
					w.cancel()
					w.cancel = nil
				}
			})
		}
	}
}

// delivered returns the outcome a worker of this process handed the
// waiter, or nil.
func (q *Queue) delivered(wt *waiter) *Outcome {
	q.waiters.mu.Lock()
	defer q.waiters.mu.Unlock()
	return wt.out
}

// deliverEnd signals the waiters of the request an end notification names.
func (q *Queue) deliverEnd(payload string) {
	id, ok := strings.CutPrefix(payload, noteEnd)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return
	}
	q.waiters.mu.Lock()
	defer q.waiters.mu.Unlock()
	if q.waiters.recording[n] > 0 {
		return
	}
	for _, wt := range q.waiters.byID[n] {
		signal(wt.ch)
	}
}

// recording notes that a worker of this process is about to record
// request id's outcome; the worker calls recorded when it is done.
func (q *Queue) recording(id int64) {
	q.waiters.mu.Lock()
	defer q.waiters.mu.Unlock()
	if q.waiters.recording == nil {
		q.waiters.recording = map[int64]int{}
	}
	q.waiters.recording[id]++
}

// recorded ends what recording began and wakes the request's waiters:
// with o, the outcome the worker's statement recorded, which Wait then
// returns without reading it back; with nil (the statement failed, or
// another claim's worker records the outcome), to read the request.
func (q *Queue) recorded(id int64, o *Outcome) {
	q.waiters.mu.Lock()
	defer q.waiters.mu.Unlock()
	if q.waiters.recording[id]--; q.waiters.recording[id] <= 0 {
		delete(q.waiters.recording, id)
	}
	for _, wt := range q.waiters.byID[id] {
		if o != nil {
			c := *o
			wt.out = &c
		}
		signal(wt.ch)
	}
}

// wakeAllWaiters signals every waiter, after the listener (re)connected:
// an end may have been missed while it was not listening.
func (q *Queue) wakeAllWaiters() {
	q.waiters.mu.Lock()
	defer q.waiters.mu.Unlock()
	for _, l := range q.waiters.byID {
		for _, wt := range l {
			signal(wt.ch)
		}
	}
}

// signal wakes whoever reads ch, without blocking when it is awake already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// localWorkers are the wake channels of the workers that run on one Queue
// in this process. Submit wakes them and a worker's recorded outcome
// reaches the Queue's waiters directly, without the notification's round
// trip through the server (which still goes to every other process).
type localWorkers struct {
	mu    sync.Mutex
	wakes map[chan struct{}]func(id int64) // a worker's wake channel, and how it stops a request it runs
	// known holds the last requests that Submit woke the local workers
	// for or that one of them claimed: their new-request notification
	// wakes nobody again.
	known map[int64]struct{}
}

func (l *localWorkers) add(ch chan struct{}, stop func(id int64)) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wakes == nil {
		l.wakes = map[chan struct{}]func(int64){}
	}
	l.wakes[ch] = stop
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.wakes, ch)
	}
}

// note records request id as known; it reports whether it was already.
// Call with l.mu held.
func (l *localWorkers) note(id int64) bool {
	if _, ok := l.known[id]; ok {
		return true
	}
	if l.known == nil || len(l.known) > 1024 {
		l.known = map[int64]struct{}{} // the oldest notifications have arrived
	}
	l.known[id] = struct{}{}
	return false
}

// submittedHere wakes the local workers for request id, submitted through
// this Queue, unless they were woken for it or claimed it already.
func (l *localWorkers) submittedHere(id int64) { l.wakeFor(id) }

// heard wakes the local workers for request id, whose new-request
// notification a worker heard, unless they were woken for it or claimed
// it already: each request wakes them once, whichever comes first.
func (l *localWorkers) heard(id int64) { l.wakeFor(id) }

func (l *localWorkers) wakeFor(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.wakes) == 0 || l.note(id) {
		return
	}
	for ch := range l.wakes {
		signal(ch)
	}
}

// cancelledHere asks the local workers to stop the running requests ids,
// whose cancel this Queue committed, without waiting for the cancel
// notification (which still reaches the workers of other processes).
func (l *localWorkers) cancelledHere(ids []int64) {
	if len(ids) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, stop := range l.wakes {
		for _, id := range ids {
			stop(id)
		}
	}
}

// claimedHere records that a local worker claimed request id.
func (l *localWorkers) claimedHere(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.note(id)
}
