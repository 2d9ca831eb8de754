package fit

import (
	"context"
	"fmt"
	"math"

	"servesim/internal/nnls"
)

// Loop tunes Iterate, the fixed-point iteration every fit over replays
// runs: replay with the current parameters, solve the equations the replay
// gives, step, again. The zero value replays once per iteration up to
// Iterations, takes each solve whole, and keeps the mean of the later
// solves (KeepMean).
type Loop struct {
	Iterations int     // replays with a solve after each, at most
	Tolerance  float64 // stop once no parameter moves by more than this share; 0 runs every iteration
	Ridge      float64 // pull of each solve towards its prior, relative to each column (nnls.Options)
	// RidgeToCurrent makes each solve's prior the iterate just replayed;
	// by default it is the start.
	RidgeToCurrent bool
	// Damping is the share of each solve the step takes, the rest staying
	// at the current iterate (the batches of the next replay move with the
	// parameters, so a full step can overshoot); 0 or 1 take the solve
	// whole.
	Damping float64
	// Lower, if set, bounds each parameter from below after each step
	// (math.Inf(-1): no bound).
	Lower []float64
	// Robust is the number of reweighted solves after the first (see
	// solve); 0 solves by plain weighted least squares.
	Robust int
	Keep   Keep
	// Fixed marks the parameters the equations hold at their start
	// (KeepMean restores them exactly instead of averaging equal values).
	Fixed []bool
}

// Keep says which parameters a fit returns.
type Keep int

const (
	// KeepMean keeps the mean of the second half of the solves (Polyak
	// averaging: the iterates do not settle exactly, because a replay with
	// other parameters puts its steps at other phases against the
	// arrivals, but wander within the noise this leaves), replayed once
	// more; unless it replays worse than the start, then the replayed
	// iterate with the lowest objective.
	KeepMean Keep = iota
	// KeepBest keeps the replayed iterate with the lowest objective.
	KeepBest
)

// Pass is one replay of a fit: its objective (lower is better), the
// equations it gives (x·θ ≈ y) and what the caller keeps of it.
type Pass[T any] struct {
	Objective float64
	Equations []Equation
	Value     T
}

// Replayer replays parameters θ at iteration iter (0 is the start);
// equations says whether the pass's equations are wanted (the last replay
// of KeepMean only grades).
type Replayer[T any] func(ctx context.Context, iter int, theta []float64, equations bool) (Pass[T], error)

// Outcome is the result of Iterate.
type Outcome[T any] struct {
	Theta     []float64 // the parameters kept
	Kept      Pass[T]   // their replay
	Index     int       // the iterate kept: -1 the solves' mean, else its iteration (0 the start)
	Start     Pass[T]   // the start's replay
	Mean      Pass[T]   // KeepMean: the mean's replay
	Window    [][]float64
	Passes    int  // replays run
	Converged bool // stopped by Tolerance
	Equations int  // equations of the last solve
	Residual  float64
}

// Iterate runs the fixed-point iteration from start: replay, solve the
// pass's equations by non-negative least squares, step; then keep what
// l.Keep says.
func Iterate[T any](ctx context.Context, l Loop, start []float64, replay Replayer[T]) (*Outcome[T], error) {
	type cand struct {
		theta []float64
		pass  Pass[T]
	}
	out := &Outcome[T]{}
	var cands []cand
	var hist [][]float64
	theta := start
	for iter := 0; iter < l.Iterations; iter++ {
		p, err := replay(ctx, iter, theta, true)
		if err != nil {
			return nil, err
		}
		if iter == 0 {
			out.Start = p
		}
		cands = append(cands, cand{theta, p})
		prior := start
		if l.RidgeToCurrent {
			prior = theta
		}
		next, resid, err := solve(p.Equations, len(start), prior, l.Ridge, l.Robust)
		if err != nil {
			return nil, err
		}
		out.Equations, out.Residual = len(p.Equations), resid
		next = l.step(theta, next)
		change := maxRelChange(theta, next)
		hist = append(hist, next)
		theta = next
		if l.Tolerance > 0 && change < l.Tolerance {
			out.Converged = true
			break
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("fit: %d iterations", l.Iterations)
	}
	out.Passes = len(cands)
	best := 0
	for i, c := range cands {
		if c.pass.Objective < cands[best].pass.Objective {
			best = i
		}
	}
	if l.Keep == KeepBest {
		out.Theta, out.Kept, out.Index = cands[best].theta, cands[best].pass, best
		return out, nil
	}
	out.Window = hist[len(hist)/2:]
	theta = mean(out.Window)
	for j, f := range l.Fixed {
		if f {
			theta[j] = start[j]
		}
	}
	p, err := replay(ctx, len(hist), theta, false)
	if err != nil {
		return nil, err
	}
	out.Passes++
	out.Mean = p
	out.Theta, out.Kept, out.Index = theta, p, -1
	if p.Objective > out.Start.Objective {
		out.Theta, out.Kept, out.Index = cands[best].theta, cands[best].pass, best
	}
	return out, nil
}

// step moves from θ towards the solve by the damping share and applies the
// lower bounds.
func (l *Loop) step(theta, solved []float64) []float64 {
	if d := l.Damping; d > 0 && d != 1 {
		for k := range solved {
			solved[k] = (1-d)*theta[k] + d*solved[k]
		}
	}
	for k, lo := range l.Lower {
		solved[k] = max(solved[k], lo)
	}
	return solved
}

// Equation is x·θ ≈ y with weight W (W = weight/σ² where σ, its standard
// error, is known; the robust solve needs σ).
type Equation struct {
	X     []float64
	Y, W  float64
	Sigma float64
}

func (e *Equation) at(theta []float64) float64 {
	v := 0.0
	for j, xv := range e.X {
		v += xv * theta[j]
	}
	return v
}

// solve returns the non-negative least-squares parameters of the
// equations (reweighted robust times: see robustSolve) and their RMS
// relative residual at the solution.
func solve(eqs []Equation, params int, prior []float64, ridge float64, robust int) ([]float64, float64, error) {
	theta, err := robustSolve(eqs, params, prior, ridge, robust)
	if err != nil {
		return nil, 0, fmt.Errorf("fit: %w", err)
	}
	var sq float64
	for i := range eqs {
		r := (eqs[i].at(theta) - eqs[i].Y) / eqs[i].Y
		sq += r * r
	}
	return theta, math.Sqrt(sq / float64(len(eqs))), nil
}

// robustSolve fits the equations by iteratively reweighted least squares
// towards least absolute standardised residuals: after a plain solve, each
// equation's weight is divided by its |residual|/σ where that exceeds 1
// (Huber's weights at one σ), passes more times. calibrate grades MAPE, an
// L1 measure of relative error, and measured times carry stalls — a busy
// machine adds tens of milliseconds to a few requests — which least squares
// would chase.
func robustSolve(eqs []Equation, p int, prior []float64, ridge float64, passes int) ([]float64, error) {
	robust := make([]float64, len(eqs))
	for i := range robust {
		robust[i] = 1
	}
	var theta []float64
	for pass := 0; pass <= passes; pass++ {
		ne, err := nnls.New(p)
		if err != nil {
			return nil, err
		}
		for i := range eqs {
			ne.Add(eqs[i].X, eqs[i].Y, eqs[i].W*robust[i])
		}
		if theta, err = ne.Solve(nnls.Options{Prior: prior, Ridge: ridge}); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		if pass == passes {
			break
		}
		for i := range eqs {
			z := math.Abs(eqs[i].at(theta)-eqs[i].Y) / eqs[i].Sigma
			robust[i] = 1 / max(z, 1)
		}
	}
	return theta, nil
}

// maxRelChange is the largest |new − old| / max(|old|, |new|) over θ
// (parameters that are both ~0 have not moved).
func maxRelChange(old, new []float64) float64 {
	m := 0.0
	for i := range old {
		d := math.Max(math.Abs(old[i]), math.Abs(new[i]))
		if d < 1e-9 {
			continue
		}
		m = math.Max(m, math.Abs(new[i]-old[i])/d)
	}
	return m
}

// mean averages vectors of equal length.
func mean(vs [][]float64) []float64 {
	m := make([]float64, len(vs[0]))
	for _, v := range vs {
		for i, x := range v {
			m[i] += x / float64(len(vs))
		}
	}
	return m
}

// spread is the largest standard deviation of one of the first n components
// relative to its mean; components with a zero mean are left out.
func spread(vs [][]float64, n int) float64 {
	m := mean(vs)
	worst := 0.0
	for i := range m[:n] {
		if m[i] <= 1e-12 {
			continue
		}
		v := 0.0
		for _, x := range vs {
			v += (x[i] - m[i]) * (x[i] - m[i])
		}
		worst = math.Max(worst, math.Sqrt(v/float64(len(vs)))/m[i])
	}
	return worst
}
