package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/ilmek-go/ilmek/bench/workload"
)

// ChatReport is the JSON line of --workload chat.
type ChatReport struct {
	Engine        string  `json:"engine"`
	Workload      string  `json:"workload"`
	Ckpt          string  `json:"ckpt"`
	Turns         int     `json:"turns"`
	NSPerTurn     float64 `json:"ns_per_turn"`
	BytesPerTurn  float64 `json:"bytes_per_turn"`
	BytesLastTurn int     `json:"bytes_last_turn"`
	FileBytes     int64   `json:"file_bytes,omitempty"`
	// FileMiB is FileBytes in MiB (2 decimals).
	FileMiB float64 `json:"file_mib,omitempty"`
	// NSTurns100to199 and NSLast100 are the mean times of turns 100 to
	// 199 and of the last 100 turns; LastVsEarly is their ratio (a flat
	// turn cost keeps it near 1). Zero when the thread is too short.
	NSTurns100to199 float64 `json:"ns_turns_100_199,omitempty"`
	NSLast100       float64 `json:"ns_last_100,omitempty"`
	LastVsEarly     float64 `json:"last_100_vs_100_199,omitempty"`
	PeakRSSKB       int64   `json:"peak_rss_kb"`
}

// runChat runs one chat thread of n turns (3000 when n is 0) and prints
// its report.
func runChat(n int, ckpt string, stdout, stderr io.Writer) int {
	if n == 0 {
		n = 3000
	}
	if ckpt != "memory" && ckpt != "sqlite" {
		fmt.Fprintf(stderr, "ilmek-bench: --workload chat: --ckpt %q: want memory or sqlite\n", ckpt)
		return exitUsage
	}
	res, err := workload.Chat(context.Background(), ckpt, "", n)
	if err != nil {
		fmt.Fprintf(stderr, "ilmek-bench: chat-%d with %s: %v\n", n, ckpt, err)
		return exitFailed
	}
	rep := ChatReport{Engine: "ilmek-code", Workload: fmt.Sprintf("chat-%d", n), Ckpt: ckpt, Turns: res.Turns,
		NSPerTurn: round(res.NSPerTurn), BytesPerTurn: round(res.BytesPerTurn), BytesLastTurn: res.BytesLastTurn,
		FileBytes: res.FileBytes, FileMiB: math.Round(float64(res.FileBytes)/(1<<20)*100) / 100,
		NSTurns100to199: round(res.NSTurns100to199), NSLast100: round(res.NSLast100), PeakRSSKB: peakRSSKB()}
	if res.NSTurns100to199 > 0 {
		rep.LastVsEarly = math.Round(res.NSLast100/res.NSTurns100to199*100) / 100
	}
	line, _ := json.Marshal(rep)
	fmt.Fprintf(stdout, "%s\n", line)
	return exitOK
}
