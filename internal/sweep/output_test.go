package sweep

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestCSVFloatsWithoutNoise: float cells are the shortest form of the
// value rounded to csvDigits significant digits, not float64 arithmetic's
// tail (7.470000000000001).
func TestCSVFloatsWithoutNoise(t *testing.T) {
	ttft := &Latency{Mean: 47.638600000000004, P50: 5314.219150000001, P90: 0.1 + 0.2, P95: 1e-7 / 3, P99: 12}
	d := &Doc{Rows: []Row{{RateRPS: 7.470000000000001, Status: StatusOK, QueueGrowth: 2.3060093003920977e-05,
		ThroughputRPS: 4.7170412076002854, TTFT: ttft}}}
	var b bytes.Buffer
	if err := d.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cell := map[string]string{}
	for i, name := range recs[0] {
		cell[name] = recs[1][i]
	}
	for col, want := range map[string]string{
		"rate_rps": "7.47", "queue_growth": "2.3060093e-05", "throughput_rps": "4.71704121",
		"ttft_mean_ms": "47.6386", "ttft_p50_ms": "5314.21915", "ttft_p90_ms": "0.3", "ttft_p95_ms": "3.33333333e-08", "ttft_p99_ms": "12",
	} {
		if cell[col] != want {
			t.Errorf("%s: %q, want %q", col, cell[col], want)
		}
	}
}
