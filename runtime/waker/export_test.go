package waker

import "time"

// AbortedListing sets how often a waker lists every aborted thread again
// (abortedFullEvery) and how far before its last listing a windowed one
// starts (abortedMargin), for tests.
func AbortedListing(every, margin time.Duration) Option {
	return func(w *Waker) { w.abortedEvery, w.abortedBack = every, margin }
}
