package timeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"servesim/internal/deploy"
	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// rawEvent is one trace event with the fields the format requires kept
// apart from absent ones.
type rawEvent struct {
	Ph   *string        `json:"ph"`
	Name string         `json:"name"`
	Pid  *int           `json:"pid"`
	Tid  *int           `json:"tid"`
	Ts   *int64         `json:"ts"`
	Dur  *int64         `json:"dur"`
	ID   *int64         `json:"id"`
	Cat  string         `json:"cat"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`
}

// parsed is what the structural check found in a timeline.
type parsed struct {
	procs     map[int]string           // pid → process name
	steps     map[int]int64            // pid → step slices
	generated map[int]int64            // pid → Σ generated_tokens
	requests  map[int]int64            // pid → request slices (both categories)
	prefilled int64                    // prefill parts that ended prefilled
	status    map[string]int64         // cat/status → request slices
	instants  map[string]int64         // router instants by name
	transfers map[int64][2]int64       // request id → [start, end] of its kv_transfer
	firstSpan map[int64]span           // decode parts: request id → first inner slice
	partsOn   map[string]map[int64]int // cat → request id → pid
}

// parseTimeline checks that b is a trace-event JSON document the viewers
// load — an object with a traceEvents array; every event with ph, pid and
// ts, and tid where the phase lives on a thread — and that every track is
// in order: step slices on a thread never overlap and start in order,
// counters and instants have non-decreasing times per track, and each
// request's async slices nest (begin/end balanced, times non-decreasing).
func parseTimeline(t *testing.T, b []byte, n int) *parsed {
	t.Helper()
	var doc struct {
		TraceEvents *[]rawEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("timeline is not valid JSON: %v", err)
	}
	if doc.TraceEvents == nil {
		t.Fatal("no traceEvents array")
	}
	p := &parsed{procs: map[int]string{}, steps: map[int]int64{}, generated: map[int]int64{}, requests: map[int]int64{},
		status: map[string]int64{}, instants: map[string]int64{}, transfers: map[int64][2]int64{},
		firstSpan: map[int64]span{}, partsOn: map[string]map[int64]int{}}
	type key struct {
		pid, tid int
		name     string
	}
	lastEnd := map[key]int64{} // X: end of the previous slice per thread
	lastTs := map[key]int64{}  // C per (pid, name); i per thread
	type akey struct {
		pid int
		cat string
		id  int64
	}
	stacks := map[akey][]string{}
	asyncTs := map[akey]int64{}
	for k, e := range *doc.TraceEvents {
		if e.Ph == nil || e.Pid == nil || e.Ts == nil {
			t.Fatalf("event %d %+v: want ph, pid and ts", k, e)
		}
		ph, pid, ts := *e.Ph, *e.Pid, *e.Ts
		if pid < 0 || pid > n {
			t.Fatalf("event %d: pid %d outside instances 0..%d and the router %d", k, pid, n-1, n)
		}
		if ph != "M" && ph != "C" && e.Tid == nil {
			t.Fatalf("event %d %+v: phase %s needs a tid", k, e, ph)
		}
		switch ph {
		case "M":
			if e.Name == "process_name" {
				p.procs[pid] = e.Args["name"].(string)
			}
		case "X":
			kk := key{pid, *e.Tid, ""}
			if e.Dur == nil || *e.Dur <= 0 || ts < lastEnd[kk] {
				t.Fatalf("step %+v: want a positive dur and a start after the previous slice's end %d", e, lastEnd[kk])
			}
			lastEnd[kk] = ts + *e.Dur
			p.steps[pid]++
			p.generated[pid] += arg(event{Args: e.Args}, "generated_tokens")
		case "C", "i":
			kk := key{pid, 0, e.Name}
			if ph == "i" {
				kk = key{pid, *e.Tid, ""}
				if pid != n || e.S != "t" {
					t.Fatalf("instant %+v: want thread-scoped on the router (pid %d)", e, n)
				}
				p.instants[e.Name]++
			}
			if ts < lastTs[kk] {
				t.Fatalf("%s %q on pid %d at %d before the previous one (%d)", ph, e.Name, pid, ts, lastTs[kk])
			}
			lastTs[kk] = ts
		case "b", "e":
			if e.ID == nil || e.Cat == "" {
				t.Fatalf("async event %+v: want a category and an id", e)
			}
			ak := akey{pid, e.Cat, *e.ID}
			if ts < asyncTs[ak] {
				t.Fatalf("async %+v at %d before the previous event of its slice (%d)", e, ts, asyncTs[ak])
			}
			asyncTs[ak] = ts
			st := stacks[ak]
			if ph == "e" {
				if len(st) == 0 || st[len(st)-1] != e.Name {
					t.Fatalf("async %+v ends, open %v", e, st)
				}
				stacks[ak] = st[:len(st)-1]
				continue
			}
			stacks[ak] = append(st, e.Name)
			switch {
			case e.Cat == "kv_transfer":
				if pid != n {
					t.Fatalf("transfer %+v off the router", e)
				}
				p.transfers[*e.ID] = [2]int64{ts, -1}
			case e.Name == "request":
				if len(st) != 0 {
					t.Fatalf("request %d begins inside %v", *e.ID, st)
				}
				p.requests[pid]++
				status := e.Args["status"].(string)
				p.status[e.Cat+"/"+status]++
				if e.Cat == "prefill_part" && status == instance.StatusPrefilled.String() {
					p.prefilled++
				}
				if p.partsOn[e.Cat] == nil {
					p.partsOn[e.Cat] = map[int64]int{}
				}
				if _, dup := p.partsOn[e.Cat][*e.ID]; dup {
					t.Fatalf("request %d (%s) appears twice", *e.ID, e.Cat)
				}
				p.partsOn[e.Cat][*e.ID] = pid
			default:
				if len(st) != 1 {
					t.Fatalf("%q of request %d not directly inside its request slice: %v", e.Name, *e.ID, st)
				}
				if e.Name == "kv_transfer" {
					p.firstSpan[*e.ID] = span{name: e.Name, start: ts}
				}
			}
		default:
			t.Fatalf("unexpected phase in %+v", e)
		}
	}
	for ak, st := range stacks {
		if len(st) != 0 {
			t.Fatalf("%+v: slices left open %v", ak, st)
		}
	}
	// The transfers' ends, for comparison with the decode parts.
	for _, e := range *doc.TraceEvents {
		if *e.Ph == "e" && e.Cat == "kv_transfer" {
			tr := p.transfers[*e.ID]
			tr[1] = *e.Ts
			p.transfers[*e.ID] = tr
		}
		if *e.Ph == "e" && e.Name == "kv_transfer" && e.Cat == "request" {
			s := p.firstSpan[*e.ID]
			s.end = *e.Ts
			p.firstSpan[*e.ID] = s
		}
	}
	return p
}

// clusterRecords: arrivals every gap µs with prompts sharing one of two
// prefixes, so prefix scorers and the prefix-threshold decider see hits.
func clusterRecords(n int, gapUs int64) []tracev2.Record {
	recs := make([]tracev2.Record, n)
	for i := range recs {
		at := int64(i) * gapUs
		recs[i] = tracev2.Record{RequestID: int64(i), ArrivalTimeUs: at, SendTimeUs: at, InputTokens: 200 + 61*(i%7),
			OutputTokens: 40 + 17*(i%5), Status: "ok", PrefixGroup: fmt.Sprint(i % 2), PrefixLength: 64}
	}
	return recs
}

func resolveCluster(t *testing.T, blocks int, edit func(*deploy.Config)) *deploy.Resolved {
	t.Helper()
	cfg := deploy.Default()
	cfg.TotalKVBlocks, cfg.MaxModelLen = blocks, 2048
	edit(&cfg)
	d, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestClusterTimeline: on clusters of every shape, each instance's process
// holds exactly its steps and the requests routed to it, the router holds
// one instant per routing decision and rejection, every KV transfer is a
// slice whose times equal its decode part's first slice, and recording
// changes no result.
func TestClusterTimeline(t *testing.T) {
	tests := []struct {
		name   string
		blocks int
		edit   func(*deploy.Config)
	}{
		{"round-robin, preempting", 140, func(c *deploy.Config) { c.Instances = 3 }},
		{"weighted", 2000, func(c *deploy.Config) {
			c.Instances, c.RoutingPolicy = 4, "weighted"
			c.RoutingScorers = "prefix-affinity:2,precise-prefix-cache:1,queue-depth:1,kv-utilization:1,load-balance:1"
		}},
		{"token bucket rejects", 2000, func(c *deploy.Config) {
			c.Instances, c.RoutingPolicy, c.AdmissionPolicy = 2, "least-loaded", "token-bucket"
			c.TokenBucketCapacity, c.TokenBucketRefill = 2000, 20000
		}},
		{"P/D always, contention", 600, func(c *deploy.Config) {
			c.PrefillInstances, c.DecodeInstances, c.PDDecider, c.PDTransferContention = 2, 2, "always", true
		}},
		{"P/D prefix threshold", 2000, func(c *deploy.Config) {
			c.PrefillInstances, c.DecodeInstances, c.PDDecider, c.PDPrefixThreshold = 1, 2, "prefix-threshold", 150
		}},
		{"pipeline parallel", 2000, func(c *deploy.Config) { c.Instances, c.PipelineParallel = 2, 2 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := resolveCluster(t, tc.blocks, tc.edit)
			if !d.IsCluster() {
				t.Fatal("not a cluster deployment")
			}
			recs := clusterRecords(150, 4_000)
			plain, _ := simulateCluster(t, d, recs, nil)
			var buf bytes.Buffer
			results, sum := simulateCluster(t, d, recs, New(&buf))
			// Without fast-forward, results of different instances may
			// reach the sink in another order; each is unchanged.
			byID := func(rs []tracev2.SimResult) {
				slices.SortFunc(rs, func(a, b tracev2.SimResult) int { return cmp.Compare(a.RequestID, b.RequestID) })
			}
			byID(plain)
			byID(results)
			if !reflect.DeepEqual(results, plain) {
				t.Fatal("results differ with the timeline on")
			}
			n := len(sum.PerInstance)
			p := parseTimeline(t, buf.Bytes(), n)
			var routed int64
			for i, is := range sum.PerInstance {
				routed += is.Routed
				if p.steps[i] != is.Steps || p.requests[i] != is.Routed {
					t.Errorf("instance %d: %d step slices and %d requests, want %d steps and %d routed",
						i, p.steps[i], p.requests[i], is.Steps, is.Routed)
				}
				want := fmt.Sprintf("instance_%d", i)
				if is.Pool != "" {
					want += " " + is.Pool
				}
				if got := p.procs[i]; len(got) < len(want) || got[:len(want)] != want {
					t.Errorf("process %d named %q, want it to start with %q", i, got, want)
				}
			}
			if p.procs[n] != "router" || p.instants["routed"] != routed || p.instants["rejected"] != sum.RejectedRequests {
				t.Errorf("router %q: %d routed and %d rejected instants, want %d and %d", p.procs[n], p.instants["routed"],
					p.instants["rejected"], routed, sum.RejectedRequests)
			}
			if got, want := int64(len(p.transfers)), p.prefilled-p.instants["dropped"]; got != want {
				t.Errorf("%d transfers, want prefilled parts %d − dropped %d", got, p.prefilled, p.instants["dropped"])
			}
			for id, tr := range p.transfers {
				s := p.firstSpan[id]
				if s.start != tr[0] || s.end != tr[1] || tr[1] <= tr[0] {
					t.Errorf("request %d: transfer [%d, %d], decode part's kv_transfer slice [%d, %d]", id, tr[0], tr[1], s.start, s.end)
				}
				pre, dec := p.partsOn["prefill_part"][id], p.partsOn["request"][id]
				if sum.PerInstance[pre].Pool != "prefill" || sum.PerInstance[dec].Pool != "decode" {
					t.Errorf("request %d: prefill part on %d (%s), decode part on %d (%s)", id, pre, sum.PerInstance[pre].Pool,
						dec, sum.PerInstance[dec].Pool)
				}
			}
			switch {
			case tc.name == "token bucket rejects" && sum.RejectedRequests == 0,
				tc.name == "P/D always, contention" && len(p.transfers) == 0,
				tc.name == "round-robin, preempting" && sum.PreemptionCount == 0:
				t.Errorf("the case does not exercise what it is named for: %+v", sum)
			}
		})
	}
}

// simulateCluster replays recs on d, with the observer if not nil, and
// returns the SimResults and the summary.
func simulateCluster(t *testing.T, d *deploy.Resolved, recs []tracev2.Record, obs *Recorder) ([]tracev2.SimResult, metrics.Summary) {
	t.Helper()
	cfg := replay.Config{Deploy: d, Seed: 1}
	if obs != nil {
		cfg.Observer = obs
	}
	var results []tracev2.SimResult
	src := &replay.SliceSource{Records: append([]tracev2.Record(nil), recs...)}
	out, err := replay.Simulate(context.Background(), cfg, src, nil, func(_ *tracev2.Record, res *tracev2.SimResult) error {
		if res != nil {
			results = append(results, *res)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return results, out.Summary
}

// TestClusterTimelineOutcome drives the cluster simulator directly to
// compare with its own totals: transfer slices = transfers started (PD-3,
// with transfers in flight cut by the horizon), request slices per
// instance = requests given to it, step slices = its steps.
func TestClusterTimelineOutcome(t *testing.T) {
	d := resolveCluster(t, 400, func(c *deploy.Config) {
		c.PrefillInstances, c.DecodeInstances, c.PDDecider = 2, 1, "always"
		c.PDTransferBandwidth, c.PDTransferBaseLatency = 0.5, 2*time.Millisecond
	})
	for _, horizon := range []int64{0, 300_000} {
		var buf bytes.Buffer
		rec := New(&buf)
		cc := d.ClusterConfig
		cc.Instances = append([]instance.Config(nil), cc.Instances...)
		cc.HorizonUs, cc.Observer = horizon, rec
		for i := range cc.Instances {
			cc.Instances[i].Tracer, cc.Instances[i].Steps = rec.Tracer(i), rec
		}
		var reqs []*instance.Request
		for i, r := range clusterRecords(120, 3_000) {
			p := make([]int32, r.InputTokens)
			for k := range p {
				p[k] = int32(i*1000 + k)
			}
			reqs = append(reqs, &instance.Request{ID: r.RequestID, ArrivalUs: r.ArrivalTimeUs, Prompt: p,
				OutputLen: r.OutputTokens, MaxOutputLen: r.OutputTokens})
		}
		c, err := cluster.New(cc, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
		if err != nil {
			t.Fatal(err)
		}
		rec.Start(c.Instances(), c.Pools())
		c.Engine().SetObserver(rec.Event)
		out, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Finish(out.EndUs); err != nil {
			t.Fatal(err)
		}
		p := parseTimeline(t, buf.Bytes(), len(cc.Instances))
		if int64(len(p.transfers)) != out.TransfersStarted || out.TransfersStarted == 0 {
			t.Errorf("horizon %d: %d transfer slices, %d transfers started", horizon, len(p.transfers), out.TransfersStarted)
		}
		if horizon > 0 && out.TransfersInFlight+int64(p.status["request/queued"]+p.status["request/pending"]) == 0 {
			t.Errorf("horizon %d cuts nothing: %+v", horizon, p.status)
		}
		for i, in := range c.Instances() {
			k := in.Counters()
			if p.requests[i] != k.Submitted || p.steps[i] != k.Steps {
				t.Errorf("horizon %d, instance %d: %d requests and %d steps, instance counts %d and %d",
					horizon, i, p.requests[i], p.steps[i], k.Submitted, k.Steps)
			}
		}
		if rec.Steps() != out.Counters.Steps {
			t.Errorf("horizon %d: Steps() %d, run %d", horizon, rec.Steps(), out.Counters.Steps)
		}
	}
}
