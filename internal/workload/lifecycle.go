package workload

import (
	"fmt"
	"math"
	"slices"
)

// Lifecycle restricts a client to activity windows (BLIS lifecycle,
// docs/workload.md §3): it sends only while one of its windows is open.
type Lifecycle struct {
	Windows []Window
}

// Window is one activity window [StartUs, EndUs), µs from t = 0.
// TraceRate, when set, is the window's weight among the co-active windows
// (proportional mode) or, with aggregate_rate 0, its own rate in
// requests/s (absolute mode). Arrival, Input and Output, when set, replace
// the client's for requests arriving in the window.
type Window struct {
	StartUs, EndUs int64
	TraceRate      *float64
	Arrival        *Arrival
	Input, Output  *Distribution
}

// maxWindows bounds the windows of one client.
const maxWindows = 100_000

type rawLifecycle struct {
	Windows []rawWindow `yaml:"windows"`
}

type rawWindow struct {
	StartUs    *int64      `yaml:"start_us"`
	EndUs      *int64      `yaml:"end_us"`
	TraceRate  *float64    `yaml:"trace_rate"`
	Arrival    *rawArrival `yaml:"arrival"`
	InputDist  *rawDist    `yaml:"input_distribution"`
	OutputDist *rawDist    `yaml:"output_distribution"`
}

// decodeLifecycle reads a lifecycle block at path.
func decodeLifecycle(r *rawLifecycle, path string, pos *positions) (*Lifecycle, []string, *Error) {
	if len(r.Windows) > maxWindows {
		return nil, nil, &Error{Path: path + ".windows", Msg: fmt.Sprintf("%d windows; at most %d", len(r.Windows), maxWindows)}
	}
	var warn []string
	lc := &Lifecycle{}
	for i, rw := range r.Windows {
		wp := fmt.Sprintf("%s.windows[%d]", path, i)
		if rw.StartUs == nil || rw.EndUs == nil {
			return nil, nil, &Error{Path: wp, Msg: "start_us and end_us are required"}
		}
		w := Window{StartUs: *rw.StartUs, EndUs: *rw.EndUs, TraceRate: rw.TraceRate,
			Input: distOf(rw.InputDist), Output: distOf(rw.OutputDist)}
		if rw.Arrival != nil {
			a, aw, err := decodeArrival(rw.Arrival, wp+".arrival", pos)
			if err != nil {
				return nil, nil, err
			}
			w.Arrival, warn = &a, append(warn, aw...)
		}
		lc.Windows = append(lc.Windows, w)
	}
	return lc, warn, nil
}

// checkLifecycle validates a client's windows (path: the client).
func checkLifecycle(lc *Lifecycle, path string) *Error {
	if len(lc.Windows) > maxWindows {
		return &Error{Path: path + ".lifecycle.windows", Msg: fmt.Sprintf("%d windows; at most %d", len(lc.Windows), maxWindows)}
	}
	for i, w := range lc.Windows {
		wp := fmt.Sprintf("%s.lifecycle.windows[%d]", path, i)
		if w.StartUs < 0 || w.EndUs <= w.StartUs || w.EndUs > maxTimeUs {
			return &Error{Path: wp, Msg: fmt.Sprintf("[%d, %d) µs: want 0 <= start_us < end_us <= %d", w.StartUs, w.EndUs, maxTimeUs)}
		}
		if r := w.TraceRate; r != nil && (!(*r >= 0) || math.IsInf(*r, 0)) {
			return &Error{Path: wp + ".trace_rate", Msg: fmt.Sprintf("%g must be finite and >= 0", *r)}
		}
		if w.Arrival != nil {
			if err := checkArrival(wp+".arrival", w.Arrival); err != nil {
				return err
			}
		}
	}
	return nil
}

// phase is one stretch of a windowed client's timeline during which it
// sends, with the window's rate, arrival process and lengths.
type phase struct {
	start, end int64
	arr        arrivalSampler
	smp        *samplers
}

// windowedClient reports whether c is restricted to windows.
func windowedClient(c *Client) bool { return c.Lifecycle != nil && len(c.Lifecycle.Windows) > 0 }

// rateKey groups clients whose windows and fraction are the same (the
// members of a cohort), so that the co-active sums cost per group, not
// per client.
type rateKey struct {
	lc   *Lifecycle
	frac float64
}

// windowRates computes the rate, in requests (or sessions) per second, of
// every window of every windowed client of s (docs/workload.md §3):
//
//   - absolute mode (aggregate_rate 0): the window's trace_rate;
//   - proportional mode: aggregate_rate × weight / Σ weights of the windows
//     co-active with it, where a window's weight is its trace_rate, else
//     its client's rate_fraction; each windowed client contributes its
//     first window overlapping this one, each always-on client its
//     rate_fraction. So aggregate_rate is reached whichever clients are
//     active (BLIS's per-phase normalisation, computed per window).
func windowRates(s *Spec) map[rateKey][]float64 {
	counts := map[rateKey]int{}
	var keys []rateKey
	alwaysOn := 0.0
	for i := range s.Clients {
		c := &s.Clients[i]
		if c.Concurrency > 0 {
			continue
		}
		if !windowedClient(c) {
			alwaysOn += c.RateFraction
			continue
		}
		k := rateKey{c.Lifecycle, c.RateFraction}
		if counts[k] == 0 {
			keys = append(keys, k)
		}
		counts[k]++
	}
	weight := func(k rateKey, w *Window) float64 {
		if w.TraceRate != nil {
			return *w.TraceRate
		}
		return k.frac
	}
	out := map[rateKey][]float64{}
	for _, k := range keys {
		rates := make([]float64, len(k.lc.Windows))
		for wi := range k.lc.Windows {
			w := &k.lc.Windows[wi]
			if s.AggregateRate == 0 {
				rates[wi] = weight(k, w)
				continue
			}
			denom := alwaysOn
			for _, o := range keys {
				for oi := range o.lc.Windows {
					ow := &o.lc.Windows[oi]
					if ow.StartUs < w.EndUs && w.StartUs < ow.EndUs {
						denom += float64(counts[o]) * weight(o, ow)
						break
					}
				}
			}
			if denom > 0 {
				rates[wi] = s.AggregateRate * weight(k, w) / denom
			}
		}
		out[k] = rates
	}
	return out
}

// compilePhases turns a client's windows into disjoint phases in time
// order. Where windows overlap, the earlier-listed window's rate and
// shapes apply; a window whose rate is 0 sends nothing.
func compilePhases(c *Client, path string, rates []float64, base *samplers, baseDir string) ([]phase, *Error) {
	ws := c.Lifecycle.Windows
	var cuts []int64
	for _, w := range ws {
		cuts = append(cuts, w.StartUs, w.EndUs)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// Compiled per window on first use.
	arrs := make([]*arrivalSampler, len(ws))
	smps := make([]*samplers, len(ws))
	var out []phase
	for k := 0; k+1 < len(cuts); k++ {
		lo, hi := cuts[k], cuts[k+1]
		wi := slices.IndexFunc(ws, func(w Window) bool { return w.StartUs <= lo && hi <= w.EndUs })
		if wi < 0 || !(rates[wi] > 0) {
			continue
		}
		wp := fmt.Sprintf("%s.lifecycle.windows[%d]", path, wi)
		if arrs[wi] == nil {
			a := c.Arrival
			if ws[wi].Arrival != nil {
				a = *ws[wi].Arrival
			}
			s, err := newArrivalSampler(a, rates[wi])
			if err != nil {
				return nil, &Error{Path: wp + ".arrival", Err: err}
			}
			arrs[wi] = &s
			var serr *Error
			if smps[wi], serr = windowSamplers(&ws[wi], wp, base, baseDir); serr != nil {
				return nil, serr
			}
		}
		if n := len(out); n > 0 && out[n-1].end == lo && out[n-1].smp == smps[wi] && out[n-1].arr == *arrs[wi] {
			out[n-1].end = hi
			continue
		}
		out = append(out, phase{start: lo, end: hi, arr: *arrs[wi], smp: smps[wi]})
	}
	return out, nil
}

// windowSamplers are the length samplers of a window: the client's, with
// the window's distributions in their place when it has its own.
func windowSamplers(w *Window, path string, base *samplers, baseDir string) (*samplers, *Error) {
	if w.Input == nil && w.Output == nil {
		return base, nil
	}
	s := *base
	var err *Error
	if w.Input != nil {
		if s.in, err = newLengthSampler(path+".input_distribution", w.Input, baseDir); err != nil {
			return nil, err
		}
	}
	if w.Output != nil {
		if s.out, err = newLengthSampler(path+".output_distribution", w.Output, baseDir); err != nil {
			return nil, err
		}
	}
	return &s, nil
}
