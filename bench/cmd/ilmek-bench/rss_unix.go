//go:build unix

package main

import (
	goruntime "runtime"
	"syscall"
)

// peakRSSKB is the process's peak resident set in KiB (getrusage's
// ru_maxrss: KiB on Linux, bytes on macOS).
func peakRSSKB() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if goruntime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
