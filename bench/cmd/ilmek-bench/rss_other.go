//go:build !unix

package main

// peakRSSKB is not measured on this system.
func peakRSSKB() int64 { return 0 }
