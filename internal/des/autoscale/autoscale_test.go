package autoscale

import (
	"math"
	"math/rand/v2"
	"testing"
)

var h100 = Variant{GPU: "H100", TP: 1}

func rep(id int, kvCap, inUse int64, queue int) Replica {
	return Replica{ID: id, Variant: h100, CostPerHour: 3, KVCapacityTokens: kvCap, KVTokensInUse: inUse, QueueDepth: queue}
}

func TestAnalyzeScaleUpWhenDemandExceedsSupply(t *testing.T) {
	a := DefaultAnalyzer()
	// Supply 2 × 10000 × 0.8 = 16000; demand 2 × (9000 + 2 × 512) = 20048.
	res := a.Analyze(Signals{Replicas: []Replica{rep(0, 10000, 9000, 2), rep(1, 10000, 9000, 2)}})
	if res.TotalSupply != 16000 || res.TotalDemand != 20048 {
		t.Fatalf("supply %v demand %v, want 16000 20048", res.TotalSupply, res.TotalDemand)
	}
	if want := 20048/0.8 - 16000; math.Abs(res.Required-want) > 1e-9 || res.Spare != 0 {
		t.Fatalf("required %v spare %v, want %v 0", res.Required, res.Spare, want)
	}
}

func TestAnalyzeLoadingReplicasArePendingSupply(t *testing.T) {
	a := DefaultAnalyzer()
	s := Signals{Replicas: []Replica{rep(0, 10000, 9000, 0)}}
	if r := a.Analyze(s); r.Required != 9000/0.8-8000 {
		t.Fatalf("required %v, want %v", r.Required, 9000/0.8-8000)
	}
	s.PendingReplicas, s.PendingKVCapacityTokens = 1, 10000
	r := a.Analyze(s)
	if r.Required != 0 || r.TotalSupply != 8000 || r.Spare != 0 {
		t.Fatalf("with one loading replica: required %v supply %v spare %v, want 0 8000 0", r.Required, r.TotalSupply, r.Spare)
	}
}

func TestAnalyzeScaleDownNeedsTheNMinusOneCheck(t *testing.T) {
	a := DefaultAnalyzer()
	// Three replicas of 8000 tokens, demand 1000: spare = 24000 − 2500.
	r := a.Analyze(Signals{Replicas: []Replica{rep(0, 10000, 500, 0), rep(1, 10000, 500, 0), rep(2, 10000, 0, 0)}})
	if r.Spare != 24000-2500 || r.Required != 0 {
		t.Fatalf("spare %v required %v, want 21500 0", r.Spare, r.Required)
	}
	// One replica: never spare, however idle.
	if r := a.Analyze(Signals{Replicas: []Replica{rep(0, 10000, 0, 0)}}); r.Spare != 0 {
		t.Fatalf("one replica: spare %v, want 0", r.Spare)
	}
	// Two replicas where the one left would run above the scale-up
	// threshold: 8000 × 0.8 = 6400 < demand 6500, though 16000 > 6500/0.4.
	if r := a.Analyze(Signals{Replicas: []Replica{rep(0, 10000, 3250, 0), rep(1, 10000, 3250, 0)}}); r.Spare != 0 {
		t.Fatalf("N−1 unsafe: spare %v, want 0", r.Spare)
	}
}

func TestAnalyzeZeroReplicas(t *testing.T) {
	r := DefaultAnalyzer().Analyze(Signals{PendingReplicas: 2, PendingKVCapacityTokens: 1000})
	if r.TotalSupply != 0 || r.TotalDemand != 0 || r.Required != 0 || r.Spare != 0 || r.Utilization != 0 || r.Variants != nil {
		t.Fatalf("zero replicas: %+v, want all zero", r)
	}
}

func TestCapacityIsTheTighterBound(t *testing.T) {
	a := DefaultAnalyzer()
	r := rep(0, 10000, 0, 0)
	r.ComputeCapacityTokens = 20000
	if c := a.Capacity(r); c != 8000 {
		t.Fatalf("memory-bound capacity %v, want 8000", c)
	}
	r.ComputeCapacityTokens = 5000
	if c := a.Capacity(r); c != 5000 {
		t.Fatalf("compute-bound capacity %v, want 5000", c)
	}
}

// randomFleet is a fleet of 0..8 replicas on up to three variants.
func randomFleet(rng *rand.Rand) Signals {
	vars := []Variant{{"A100", 1}, {"H100", 1}, {"H100", 2}}
	cost := map[Variant]float64{vars[0]: 2, vars[1]: 4, vars[2]: 8}
	var s Signals
	for i := range rng.IntN(9) {
		v := vars[rng.IntN(len(vars))]
		kv := int64(1000 + rng.IntN(100000))
		r := Replica{ID: i, Variant: v, CostPerHour: cost[v], KVCapacityTokens: kv, KVTokensInUse: rng.Int64N(kv + 1),
			QueueDepth: rng.IntN(50), InFlight: rng.IntN(300)}
		if rng.IntN(2) == 0 {
			r.ComputeCapacityTokens = int64(rng.IntN(100000))
		}
		s.Replicas = append(s.Replicas, r)
	}
	if rng.IntN(3) == 0 {
		s.PendingReplicas, s.PendingKVCapacityTokens = 1, int64(rng.IntN(100000))
	}
	return s
}

// TestAnalyzeAndDecideProperties checks the spec's invariants over random
// fleets: per-variant supply and demand sum to the totals, variants come
// by cost, scale-up and scale-down are never signalled or decided
// together, and a decision respects the inventory and the bounds.
func TestAnalyzeAndDecideProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range 5000 {
		s := randomFleet(rng)
		a := Analyzer{KVCacheThreshold: 0.5 + rng.Float64()/2, ScaleUpThreshold: 0.5 + rng.Float64()/2,
			ScaleDownBoundary: 0.1 + rng.Float64()*0.4, AvgInputTokens: float64(rng.IntN(2000))}
		r := a.Analyze(s)
		var sup, dem float64
		n := 0
		for i, v := range r.Variants {
			sup, dem, n = sup+v.Supply, dem+v.Demand, n+v.Replicas
			if i > 0 && v.CostPerReplica < r.Variants[i-1].CostPerReplica {
				t.Fatalf("case %d: variants not by cost: %+v", k, r.Variants)
			}
		}
		if math.Abs(sup-r.TotalSupply) > 1e-6*max(1, sup) || math.Abs(dem-r.TotalDemand) > 1e-6*max(1, dem) || n != len(s.Replicas) {
			t.Fatalf("case %d: variant sums %v %v %d, totals %v %v %d", k, sup, dem, n, r.TotalSupply, r.TotalDemand, len(s.Replicas))
		}
		if r.Required > 0 && r.Spare > 0 || r.Required < 0 || r.Spare < 0 {
			t.Fatalf("case %d: required %v spare %v", k, r.Required, r.Spare)
		}
		if r.Spare > 0 && len(s.Replicas) < 2 {
			t.Fatalf("case %d: spare %v with %d replicas", k, r.Spare, len(s.Replicas))
		}
		offers := []Offer{{Variant{"A100", 1}, 2, rng.IntN(3)}, {Variant{"H100", 1}, 4, rng.IntN(3)}, {Variant{"H100", 2}, 8, rng.IntN(5)}}
		b := Bounds{Min: rng.IntN(3), Max: rng.IntN(10)}
		d := Decide(r, offers, len(s.Replicas)+s.PendingReplicas, b)
		switch {
		case d.Delta > 0:
			if r.Required <= 0 || d.Delta != 1 {
				t.Fatalf("case %d: up %+v without required capacity", k, d)
			}
			for _, o := range offers {
				if o.Variant == d.Variant && o.FreeGPUs < d.Variant.TP {
					t.Fatalf("case %d: up on %+v with %d free GPUs", k, d.Variant, o.FreeGPUs)
				}
				if o.FreeGPUs >= o.Variant.TP && o.CostPerReplica < offersCost(offers, d.Variant) {
					t.Fatalf("case %d: up on %+v while cheaper %+v fits", k, d.Variant, o)
				}
			}
		case d.Delta < 0:
			if r.Spare <= 0 || d.Delta != -1 || len(s.Replicas)+s.PendingReplicas <= max(b.Min, 1) {
				t.Fatalf("case %d: down %+v, spare %v, %d replicas, min %d", k, d, r.Spare, len(s.Replicas), b.Min)
			}
		}
	}
}

func offersCost(o []Offer, v Variant) float64 {
	for _, x := range o {
		if x.Variant == v {
			return x.CostPerReplica
		}
	}
	return math.NaN()
}

func TestDecideCheapestThatFitsAndMostExpensiveToGo(t *testing.T) {
	a100, h := Variant{"A100", 1}, Variant{"H100", 2}
	up := Result{Required: 1}
	offers := []Offer{{h, 8, 4}, {a100, 2, 1}}
	if d := Decide(up, offers, 1, Bounds{}); d != (Decision{a100, 1}) {
		t.Fatalf("up: %+v, want the cheaper A100", d)
	}
	offers[1].FreeGPUs = 0
	if d := Decide(up, offers, 1, Bounds{}); d != (Decision{h, 1}) {
		t.Fatalf("up without A100 room: %+v, want H100 TP2", d)
	}
	offers[0].FreeGPUs = 1 // one GPU does not hold TP 2
	if d := Decide(up, offers, 1, Bounds{}); d.Delta != 0 {
		t.Fatalf("up without room: %+v, want none", d)
	}
	if d := Decide(up, []Offer{{a100, 2, 5}}, 3, Bounds{Max: 3}); d.Delta != 0 {
		t.Fatalf("up at the maximum: %+v, want none", d)
	}
	down := Result{Spare: 1, Variants: []VariantCapacity{{Variant: a100, Replicas: 2, CostPerReplica: 2}, {Variant: h, Replicas: 1, CostPerReplica: 8}}}
	if d := Decide(down, nil, 3, Bounds{Min: 1}); d != (Decision{h, -1}) {
		t.Fatalf("down: %+v, want the H100 one", d)
	}
	if d := Decide(down, nil, 3, Bounds{Min: 3}); d.Delta != 0 {
		t.Fatalf("down at the minimum: %+v, want none", d)
	}
}

// TestStabilizer follows the spec's scenarios: a 60 s window at a 30 s tick.
func TestStabilizer(t *testing.T) {
	const s30 = 30_000_000
	st := Stabilizer{UpWindowUs: 2 * s30}
	for i, want := range []bool{false, false, true, true} {
		if up, _ := st.Pass(int64(i)*s30, true, false); up != want {
			t.Fatalf("tick %d: up %v, want %v", i, up, want)
		}
	}
	st = Stabilizer{UpWindowUs: 2 * s30}
	seen := []bool{true, false, true, true, true}
	want := []bool{false, false, false, false, true} // reset at 30 s: passes at 120 s
	for i := range seen {
		if up, _ := st.Pass(int64(i)*s30, seen[i], false); up != want[i] {
			t.Fatalf("tick %d: up %v, want %v", i, up, want[i])
		}
	}
	st = Stabilizer{}
	if up, down := st.Pass(0, true, false); !up || down {
		t.Fatalf("window 0: up %v down %v, want true false", up, down)
	}
	st = Stabilizer{DownWindowUs: s30}
	if _, down := st.Pass(0, false, true); down {
		t.Fatal("down passed before its window")
	}
	if _, down := st.Pass(s30, false, true); !down {
		t.Fatal("down held after its window")
	}
}
