package replay

import (
	"fmt"
	"math"

	"servesim/internal/flagspec"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/playback"
)

// TimeScaleFlag is --time-scale of run and replay: it stretches (> 1) or
// speeds up (< 1) the traffic's arrivals, as observe --time-scale does.
func TimeScaleFlag() flagspec.Flag {
	return flagspec.Flag{Name: "time-scale", Kind: flagspec.Float64, Category: flagspec.CatClient, Default: 1.0,
		Usage: "multiply every arrival time by this (0.5 plays the traffic twice as fast, 24 stretches an hour over a day); deadlines keep their budget, think times stay"}
}

// pace applies --rate or --time-scale to the trace before it is replayed.
func (f *TraceFlags) pace(tr *Trace) error {
	switch {
	case f.RateSet:
		if err := tr.SetRate(f.Rate); err != nil {
			return fmt.Errorf("--rate: %w", err)
		}
	case f.TimeScaleSet && f.TimeScale != 1:
		if tr.RateRPS() == 0 {
			return nil // every row at once: nothing to stretch
		}
		if err := tr.SetRate(tr.RateRPS() / f.TimeScale); err != nil {
			return fmt.Errorf("--time-scale: %w", err)
		}
	}
	return nil
}

// stretch is rec arriving at its time × s (a copy; the source's row stays).
func (d *driver) stretch(rec *tracev2.Record, s float64) *tracev2.Record {
	cp := *rec
	playback.Move(&cp, int64(min(math.Round(float64(rec.ArrivalTimeUs)*s), 1<<60)))
	return &cp
}
