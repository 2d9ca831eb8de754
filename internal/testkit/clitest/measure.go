package clitest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"
)

// Measured is what one call of Measure saw.
type Measured struct {
	Wall     time.Duration
	CPU      time.Duration // the process's user + system time (every thread, GC included)
	PeakHeap uint64        // bytes of live and not yet collected heap objects, sampled
}

// heapObjects is the runtime metric Measure samples: bytes in heap objects,
// reachable or not yet swept (what the heap holds, as a user's RSS sees it
// before the runtime returns memory).
const heapObjects = "/memory/classes/heap/objects:bytes"

// Measure runs f once, after a garbage collection (so that earlier garbage
// does not count), and returns its wall and CPU time and the peak of the
// heap's objects, read every 500 µs from another goroutine and once more
// when f returns. A sample costs no stop of the world; a peak shorter than
// the interval may be missed, so the figure is a lower bound of the true
// peak, within the GC's own slack.
func Measure(f func()) Measured {
	runtime.GC()
	sample := []metrics.Sample{{Name: heapObjects}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	stop, peakc := make(chan struct{}), make(chan uint64)
	go func() {
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		var peak uint64
		for {
			select {
			case <-stop:
				peakc <- peak
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	}()
	cpu0, t0 := cpuTime(), time.Now()
	f()
	m := Measured{Wall: time.Since(t0), CPU: cpuTime() - cpu0}
	last := read()
	close(stop)
	m.PeakHeap = max(<-peakc, last)
	return m
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Report adds the figures of a benchmark's measured runs: items per second
// of wall time and of CPU time (unit names say what an item is, e.g.
// "req/s"), and the largest peak heap in MB. n is the items of one run.
func Report(b *testing.B, n int, unit string, runs []Measured) {
	b.Helper()
	var wall, cpu time.Duration
	var peak uint64
	for _, m := range runs {
		wall += m.Wall
		cpu += m.CPU
		peak = max(peak, m.PeakHeap)
	}
	items := float64(n) * float64(len(runs))
	if wall > 0 {
		b.ReportMetric(items/wall.Seconds(), unit+"/s")
	}
	if cpu > 0 {
		// On a shared machine wall time counts other processes' load;
		// the process's CPU time does not.
		b.ReportMetric(items/cpu.Seconds(), unit+"/cpu-s")
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// Counts are the request counts of a run's or a replay's summary JSON.
type Counts struct {
	Injected   int64   `json:"injected_requests"`
	Completed  int64   `json:"completed_requests"`
	Dropped    int64   `json:"dropped_unservable"`
	TimedOut   int64   `json:"timed_out_requests"`
	TTFTMeanMs float64 `json:"ttft_mean_ms"`
}

// ReadCounts decodes a summary's counts; every request injected must have
// finished (completed, dropped or timed out).
func ReadCounts(summary []byte) (Counts, error) {
	var c Counts
	if err := json.Unmarshal(summary, &c); err != nil {
		return c, fmt.Errorf("summary: %w", err)
	}
	if c.Injected == 0 || c.Completed+c.Dropped+c.TimedOut != c.Injected {
		return c, fmt.Errorf("summary: injected %d, completed %d, dropped %d, timed out %d: want every request finished",
			c.Injected, c.Completed, c.Dropped, c.TimedOut)
	}
	return c, nil
}
