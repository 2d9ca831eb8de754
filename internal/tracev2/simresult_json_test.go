package tracev2

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSimResultJSONIsEncodingJSONs: AppendJSON and AppendJSONIndent write
// the bytes json.Marshal and json.MarshalIndent write, for random results:
// floats of every magnitude and sign (integers, fractions, exponent
// forms, −0), empty and odd strings (quotes, control and HTML characters,
// non-ASCII, invalid UTF-8).
func TestSimResultJSONIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	floats := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return float64(rng.Int64N(1e9))
		case 3:
			return rng.Float64() * 1e-7
		case 4:
			return -rng.Float64() * 1e23
		case 5:
			return math.Ldexp(rng.Float64(), -1070) // subnormal
		case 6:
			return []float64{1e21, 1e-6, 999999999999999999999, 1e20, 1.5e-6, 123456.789}[rng.IntN(6)]
		}
		return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
	}
	strs := []string{"", "default", "instance_3", `a"b`, `back\slash`, "tab\there", "<html>&", "zéro", "\u2028", "bad\xffutf8", "\x00"}
	for i := 0; i < 3000; i++ {
		v := SimResult{RequestID: rng.Int64() - math.MaxInt64/2, TTFTUs: floats(), E2EUs: floats(),
			InputTokens: rng.IntN(1 << 20), OutputTokens: rng.IntN(5000) - 10, SLOClass: strs[rng.IntN(len(strs))],
			Model: strs[rng.IntN(len(strs))], ITLMeanUs: floats(), ArrivalUs: rng.Int64N(1 << 40),
			SchedulingDelayUs: floats(), NumPreemptions: rng.IntN(9), CachedInputTokens: rng.IntN(1000),
			Instance: strs[rng.IntN(len(strs))]}
		want, _ := json.Marshal(&v)
		if got := v.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("compact:\n got %s\nwant %s", got, want)
		}
		for _, pi := range [][2]string{{"  ", "  "}, {"", "  "}, {"", ""}, {">", "\t"}} {
			want, _ := json.MarshalIndent(&v, pi[0], pi[1])
			if got := v.AppendJSONIndent([]byte("x"), pi[0], pi[1]); string(got[1:]) != string(want) {
				t.Fatalf("indent %q %q:\n got %s\nwant %s", pi[0], pi[1], got[1:], want)
			}
		}
	}
}
