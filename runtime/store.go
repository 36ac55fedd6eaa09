package runtime

import "github.com/ilmek-go/ilmek/runtime/checkpoint"

// The names of the backend port (package checkpoint) an application
// reads: a run's checkpointer, what it stores, and how a listing of
// threads is asked for and answered. A backend implements the interfaces
// of package checkpoint; checkpoint.NewMemory is the in-process store.
type (
	// Checkpointer is where threads keep their checkpoints and their
	// tasks' journals (checkpoint.Checkpointer).
	Checkpointer = checkpoint.Checkpointer
	// Checkpoint is the durable record of a thread after a superstep
	// (checkpoint.Checkpoint).
	Checkpoint = checkpoint.Checkpoint
	// PendingInterrupt is an open question to a person; answer it by ID
	// (checkpoint.PendingInterrupt).
	PendingInterrupt = checkpoint.PendingInterrupt
	// ThreadQuery selects and pages the threads ListThreads returns
	// (checkpoint.ThreadQuery).
	ThreadQuery = checkpoint.ThreadQuery
	// ThreadPage is one page of ListThreads (checkpoint.ThreadPage).
	ThreadPage = checkpoint.ThreadPage
	// ThreadInfo is one thread as ListThreads finds it
	// (checkpoint.ThreadInfo).
	ThreadInfo = checkpoint.ThreadInfo
	// ChannelWrite is one channel's change in a checkpoint delta
	// (checkpoint.ChannelWrite); generated programs encode their updates
	// as these.
	ChannelWrite = checkpoint.ChannelWrite
)

// The store errors a run or resume returns, matchable with errors.Is:
// a thread another run is executing right now (retry later; nothing was
// executed), and a checkpoint or thread that does not exist.
var (
	ErrThreadBusy = checkpoint.ErrThreadBusy
	ErrNotFound   = checkpoint.ErrNotFound
)
