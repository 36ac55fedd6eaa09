package a2a_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// BenchmarkMessageSend sends message/send, each a new message on a new
// context, to a one-node graph served on SQLite: with a message id (what
// a2a_call sends, which the Server keeps in the thread's record) and
// without one.
func BenchmarkMessageSend(b *testing.B) {
	for _, withID := range []bool{false, true} {
		name := "no-id"
		if withID {
			name = "with-id"
		}
		b.Run(name, func(b *testing.B) {
			store, err := sqlite.Open(filepath.Join(b.TempDir(), "a2a.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { store.Close() })
			var runs atomic.Int32
			s := serveCounter(b, counterGraph(b, &runs, nil, nil), store, 0)
			ctx := context.Background()
			n := 0
			for b.Loop() {
				n++
				id := ""
				if withID {
					id = "m-" + strconv.Itoa(n)
				}
				r, err := s.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send", Params: map[string]any{
					"message": a2a.Message{Kind: "message", MessageID: id, Role: "user", Parts: []a2a.Part{a2a.TextPart("hi")}}}})
				if err != nil || r.Error != nil {
					b.Fatal(err, r.Error)
				}
			}
		})
	}
}
