//go:build !linux

package bench

import "os"

// fdatasync flushes f; without fdatasync, with fsync.
func fdatasync(f *os.File) error { return f.Sync() }
