package waker_test

import (
	"context"
	"log"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/runtime/waker"
)

// A SQLite file keeps a schedule that re-scores open tickets every night
// at 02:00 in Istanbul; a waker in the program's process fires it (and
// any schedule created, paused or deleted later, through the store or
// the server's /schedules routes).
func ExampleWithStoredSchedules() {
	ctx := context.Background()
	store, err := sqlite.Open("tickets.db")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	var rescore *runtime.Graph[runtime.Values, runtime.Values] // compiled elsewhere
	_, err = store.CreateSchedule(ctx, checkpoint.Schedule{
		Name: "nightly-rescore", Graph: "rescore",
		Cron: "0 2 * * *", TimeZone: "Europe/Istanbul",
		Input:   []byte(`{"status":"open"}`),
		CatchUp: checkpoint.CatchUpOne, // after downtime, run the latest missed night once
	})
	if err != nil {
		log.Fatal(err)
	}
	w, err := waker.New(store, nil, waker.WithStoredSchedules(map[string]waker.Target{"rescore": waker.Graph(rescore)}),
		waker.WithScheduleGrace(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	_ = w.Run(ctx) // until ctx is done
}
