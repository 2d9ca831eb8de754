package sweep

import (
	"bytes"
	"reflect"
	"testing"
)

// The decoders never panic, and what they accept survives a round trip.

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft.p99<500ms,itl.p99<50ms", " e2e.mean <= 2.5s ", "tpot.p50<800us", "ttft<", ",", "ttft.p99<1e-3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		again, err := ParseSLO(slo.String())
		if err != nil {
			t.Fatalf("%q: its canonical form %q does not parse: %v", s, slo.String(), err)
		}
		if !reflect.DeepEqual(again.Clauses, slo.Clauses) {
			t.Fatalf("%q: %+v, then %+v", s, slo.Clauses, again.Clauses)
		}
	})
}

func FuzzDecodeSpec(f *testing.F) {
	for _, s := range []string{
		"grid:\n  rate: 5..50:5\n  gpu: [H100, A100-80]\nslo: ttft.p99<1s\nfind: min-cost\n",
		"grid:\n  alpha_coeffs: [[1, 2], [3]]\nprecision: 1%\nprices:\n  H100: 2\n",
		"grid:\n  n: 1..64*2\n", "find: max-rate\nslo: e2e.p50<3s\n", "grid: [1]\n", "{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSpec("s.yaml", data, NewSpec())
		if err != nil {
			return
		}
		g, err := s.Check("rate")
		if err != nil || g.Len() > 1000 {
			return
		}
		for k := 0; k < g.Len(); k++ {
			if ps := g.Params(g.Case(k)); len(ps) != len(s.Axes) {
				t.Fatalf("case %d has %d params for %d axes", k, len(ps), len(s.Axes))
			}
		}
	})
}

func FuzzParseGridFlag(f *testing.F) {
	for _, s := range []string{"rate=5,10..40:10", "n=1..8*2", `s=["a:1,b:2", c]`, "x=", "=1", "a=[[1],[2]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ax, err := ParseGridFlag(s)
		if err == nil && (len(ax.Values) == 0 || len(ax.Values) > MaxAxisValues) {
			t.Fatalf("%q: %d values accepted", s, len(ax.Values))
		}
	})
}

func FuzzDecodeDoc(f *testing.F) {
	var buf bytes.Buffer
	met := true
	cost := 3.95
	d := &Doc{Format: DocFormat, Command: "run sweep", Fingerprint: "f", Shard: "0/2", Cases: 2, Keys: []string{"rate"},
		LoadKeys: []string{"rate"}, SLO: "ttft.p99<1s", Rows: []Row{{Case: 0, Role: RoleGrid, Params: []Param{{"rate", "5"}},
			RateRPS: 5, Status: StatusOK, TTFT: &Latency{P99: 12}, GPU: "H100", GPUs: 1, CostPerHour: &cost, SLOMet: &met}}}
	d.WriteJSON(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"servesim-sweep/1","rows":[{"case":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDoc("d.json", data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := d.WriteJSON(&out); err != nil {
			return // e.g. a number JSON cannot hold after decoding: refused, not a panic
		}
		again, err := DecodeDoc("d.json", out.Bytes())
		if err != nil {
			t.Fatalf("re-encoded document does not decode: %v\n%s", err, out.String())
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("round trip changed the document:\n%+v\n%+v", d, again)
		}
		if _, err := Merge([]string{"d.json"}, []*Doc{d}); err != nil {
			return
		}
	})
}
