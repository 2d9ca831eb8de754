package sweep

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
)

// RunFunc runs one case at an offered rate and returns its row. rate 0
// means the load the case itself describes (a grid case); a positive rate
// overrides it (a max-rate search). The runner fills the measurements, the
// status, GPU and GPUs; Case, Role, Params, the SLO verdict and the costs
// are the plan's. A deployment that cannot be built is a row with
// StatusInfeasible, not an error: an error stops the whole sweep.
type RunFunc func(ctx context.Context, c Case, rate float64) (Row, error)

// Plan is a sweep ready to run.
type Plan struct {
	Spec Spec
	Grid *Grid
	// Owns selects the cases of this shard (nil: every case).
	Owns func(k int64) bool
	// Jobs is the number of cases simulated at once (0: every core).
	Jobs int
	// ProbeRate is a rate far beyond any deployment's capacity, at which a
	// max-rate search measures the capacity it then brackets.
	ProbeRate float64
	// Progress, if set, is told the runs done so far and the total (−1
	// when not known in advance). It is called from one goroutine at a time.
	Progress func(done, total int)
	// Interval, when on, runs every case again under each of its variants
	// through Vary (see Interval); their rows come back apart (RunAll).
	Interval Interval
	Vary     VariantFunc
}

// Cases are the indices of the cases this shard runs.
func (p *Plan) Cases() []int {
	var ks []int
	for k := 0; k < p.Grid.Len(); k++ {
		if p.Owns == nil || p.Owns(int64(k)) {
			ks = append(ks, k)
		}
	}
	return ks
}

// executor runs evaluations on at most Jobs goroutines at once.
type executor struct {
	plan  *Plan
	run   RunFunc
	slots chan struct{}

	mu    sync.Mutex
	done  int
	total int
}

// Run runs the shard's cases (a grid, or a max-rate search per case) and
// returns their rows sorted by case, then rate, then role.
func (p *Plan) Run(ctx context.Context, run RunFunc) ([]Row, error) {
	rows, _, err := p.RunAll(ctx, run)
	return rows, err
}

// RunAll is Run that also returns the rows of the interval's variants
// (none when the interval is off), sorted as Doc.IntervalRows are.
func (p *Plan) RunAll(ctx context.Context, run RunFunc) ([]Row, []Row, error) {
	if p.Interval.On() && p.Vary == nil {
		return nil, nil, fmt.Errorf("sweep: an interval needs a runner that can vary the step times and seeds")
	}
	jobs := p.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	cases := p.Cases()
	ex := &executor{plan: p, run: run, slots: make(chan struct{}, jobs), total: len(cases)}
	if p.Spec.Find == FindMaxRate {
		ex.total = -1
	} else {
		ex.total *= 1 + len(p.Interval.Variants())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	per, perIv := make([][]Row, len(cases)), make([][]Row, len(cases))
	errs := make([]error, len(cases))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(jobs, len(cases)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				c := p.Grid.Case(cases[i])
				if p.Spec.Find == FindMaxRate {
					per[i], errs[i] = ex.search(ctx, c)
				} else {
					var r Row
					r, errs[i] = ex.eval(ctx, c, 0, RoleGrid, nil)
					per[i] = []Row{r}
				}
				if errs[i] == nil {
					perIv[i], errs[i] = ex.variants(ctx, c, per[i])
				}
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	for i := range cases {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var rows, ivRows []Row
	for i := range per {
		rows, ivRows = append(rows, per[i]...), append(ivRows, perIv[i]...)
	}
	SortRows(rows)
	SortRows(ivRows)
	return rows, ivRows, nil
}

// eval runs one case at one rate, under variant v (nil: the case as it
// is), on a free slot and completes its row.
func (ex *executor) eval(ctx context.Context, c Case, rate float64, role string, v *Variant) (Row, error) {
	select {
	case ex.slots <- struct{}{}:
	case <-ctx.Done():
		return Row{}, ctx.Err()
	}
	var r Row
	var err error
	if v == nil {
		r, err = ex.run(ctx, c, rate)
	} else if r, err = ex.plan.Vary(ctx, c, rate, *v); err == nil && r.Variant == nil {
		r.Variant = v
	}
	<-ex.slots
	if err != nil {
		return Row{}, err
	}
	r.Case, r.Role, r.Params = c.Index, role, ex.plan.Grid.Params(c)
	if rate > 0 {
		r.RateRPS = rate // the rate asked for, which the search reasons on
	}
	r.finish(ex.plan.Spec.SLO, ex.plan.Spec.Prices)
	if ex.plan.Progress != nil {
		ex.mu.Lock()
		ex.done++
		ex.plan.Progress(ex.done, ex.total)
		ex.mu.Unlock()
	}
	return r, nil
}

// evalAll runs one case at several rates at once, under variant v (nil:
// the case as it is); rows come back in the order of rates.
func (ex *executor) evalAll(ctx context.Context, c Case, rates []float64, role string, v *Variant) ([]Row, error) {
	rows := make([]Row, len(rates))
	errs := make([]error, len(rates))
	var wg sync.WaitGroup
	for i, r := range rates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i], errs[i] = ex.eval(ctx, c, r, role, v)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// SortRows orders rows by case, then rate, then role (probe last), which
// is how every table lists them; the rows of an interval's variants, then
// by variant (Variant.less).
func SortRows(rows []Row) {
	rank := map[string]int{RoleGrid: 0, RoleCurve: 1, RoleSearch: 2, RoleProbe: 3}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if a.Case != b.Case {
			return a.Case < b.Case
		}
		if a.RateRPS != b.RateRPS {
			return a.RateRPS < b.RateRPS
		}
		if rank[a.Role] != rank[b.Role] {
			return rank[a.Role] < rank[b.Role]
		}
		return a.Variant.less(b.Variant)
	})
}
