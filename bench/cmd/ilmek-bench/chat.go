package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

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
	PeakRSSKB     int64   `json:"peak_rss_kb"`
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
	line, _ := json.Marshal(ChatReport{Engine: "ilmek-code", Workload: fmt.Sprintf("chat-%d", n), Ckpt: ckpt, Turns: res.Turns,
		NSPerTurn: round(res.NSPerTurn), BytesPerTurn: round(res.BytesPerTurn), BytesLastTurn: res.BytesLastTurn,
		FileBytes: res.FileBytes, PeakRSSKB: peakRSSKB()})
	fmt.Fprintf(stdout, "%s\n", line)
	return exitOK
}
