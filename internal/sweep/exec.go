package sweep

import (
	"context"
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
	jobs := p.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	cases := p.Cases()
	ex := &executor{plan: p, run: run, slots: make(chan struct{}, jobs), total: len(cases)}
	if p.Spec.Find == FindMaxRate {
		ex.total = -1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	per := make([][]Row, len(cases))
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
					r, errs[i] = ex.eval(ctx, c, 0, RoleGrid)
					per[i] = []Row{r}
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
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rows []Row
	for _, rs := range per {
		rows = append(rows, rs...)
	}
	SortRows(rows)
	return rows, nil
}

// eval runs one case at one rate on a free slot and completes its row.
func (ex *executor) eval(ctx context.Context, c Case, rate float64, role string) (Row, error) {
	select {
	case ex.slots <- struct{}{}:
	case <-ctx.Done():
		return Row{}, ctx.Err()
	}
	r, err := ex.run(ctx, c, rate)
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

// evalAll runs one case at several rates at once; rows come back in the
// order of rates.
func (ex *executor) evalAll(ctx context.Context, c Case, rates []float64, role string) ([]Row, error) {
	rows := make([]Row, len(rates))
	errs := make([]error, len(rates))
	var wg sync.WaitGroup
	for i, r := range rates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i], errs[i] = ex.eval(ctx, c, r, role)
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
// is how every table lists them.
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
		return rank[a.Role] < rank[b.Role]
	})
}
