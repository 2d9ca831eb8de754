package cluster

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/sim"
)

// counting is an Observer that counts what it sees.
type counting struct {
	t         *testing.T
	c         *Cluster
	routed    []int64
	done      []int64
	refused   map[string]int64
	transfers int64
	last      int64
}

func (o *counting) Routed(now int64, r *instance.Request, inst int, pool string) {
	o.routed[inst]++
	if want := o.c.Pools()[inst]; want != "" && pool != want {
		o.t.Errorf("request %d routed to instance %d of pool %s in pool %q", r.ID, inst, want, pool)
	}
}

func (o *counting) Refused(now int64, r *instance.Request, reason string) { o.refused[reason]++ }

func (o *counting) Transfer(start, end int64, r *instance.Request, from, to int) {
	o.transfers++
	pools := o.c.Pools()
	if end <= start || start != o.c.Now() || pools[from] != "prefill" || pools[to] != "decode" {
		o.t.Errorf("request %d: transfer [%d, %d) at %d from %d (%s) to %d (%s)", r.ID, start, end, o.c.Now(),
			from, pools[from], to, pools[to])
	}
}

func (o *counting) InstanceDone(inst int, res *instance.Result, r *instance.Request) {
	o.done[inst]++
	if res.Instance != inst || res.ID != r.ID {
		o.t.Errorf("request %d done on %d, result says request %d on %d", r.ID, inst, res.ID, res.Instance)
	}
}

// TestObserverCounts: over random clusters of every policy (P/D, latencies
// and horizons included), the observer sees one routing per request or
// part routed to each instance, one InstanceDone per request each instance
// was given, every rejection, and one transfer per transfer started; and
// watching changes no result.
func TestObserverCounts(t *testing.T) {
	var transfers, rejected, horizons int64
	for seed := uint64(0); seed < 120; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		cfg := randomCluster(rng)
		ws := randomWorkload(rng, cfg.Instances[0].MaxModelLen)
		plain := simulate(cfg, ws, true, 0)
		n := len(cfg.Instances)
		o := &counting{t: t, routed: make([]int64, n), done: make([]int64, n), refused: map[string]int64{}}
		cfg.Observer = o
		got := map[int64]instance.Result{}
		c, err := New(cfg, &sim.SliceSource{Reqs: requests(ws)}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) {
			got[res.ID] = *res
		}))
		if err != nil {
			t.Fatal(err)
		}
		o.c = c
		out, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, plain.results) {
			t.Fatalf("seed %d: results differ with an observer", seed)
		}
		for i, in := range c.Instances() {
			if o.routed[i] != out.Info.PerInstance[i].Routed || o.done[i] != in.Counters().Submitted {
				t.Errorf("seed %d instance %d: %d routed, %d done; run: %d routed, %d submitted", seed, i,
					o.routed[i], o.done[i], out.Info.PerInstance[i].Routed, in.Counters().Submitted)
			}
		}
		transfers += o.transfers
		rejected += out.Rejected
		if cfg.HorizonUs > 0 {
			horizons++
		}
		if o.refused["rejected"] != out.Rejected || o.transfers != out.TransfersStarted {
			t.Errorf("seed %d: %d rejected, %d transfers; run: %d, %d", seed, o.refused["rejected"], o.transfers, out.Rejected, out.TransfersStarted)
		}
	}
	if transfers == 0 || rejected == 0 || horizons == 0 {
		t.Errorf("the random clusters had %d transfers, %d rejections, %d horizons: want some of each", transfers, rejected, horizons)
	}
}
