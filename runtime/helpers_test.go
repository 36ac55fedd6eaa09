package runtime_test

import (
	"iter"

	"github.com/ilmek-go/ilmek/runtime"
)

func iterPull(s iter.Seq2[runtime.Event, error]) (func() (runtime.Event, bool), func()) {
	next, stop := iter.Pull2(s)
	return func() (runtime.Event, bool) {
		ev, _, ok := next()
		return ev, ok
	}, stop
}
