package sweep

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// shardJSON runs shard i of 2 of a min-cost sweep and returns its JSON.
func shardJSON(t *testing.T, i int) string {
	t.Helper()
	p := plan(t, "ttft.p99<500ms", FindMinCost, "n=1..4", "rate=5,25")
	p.Owns = func(k int64) bool { return k%2 == int64(i) }
	d := runDoc(t, p, []string{"0/2", "1/2"}[i])
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// mergeTexts decodes and merges documents given as text, named a.json,
// b.json, ...
func mergeTexts(texts ...string) (*Doc, error) {
	var names []string
	var docs []*Doc
	for i, s := range texts {
		name := string(rune('a'+i)) + ".json"
		d, err := DecodeDoc(name, []byte(s))
		if err != nil {
			return nil, err
		}
		names, docs = append(names, name), append(docs, d)
	}
	return Merge(names, docs)
}

// A merge reads its shards as strictly as a trace: what a sweep cannot
// have written is refused, located, before anything is merged.
func TestMergeRefusesTamperedShards(t *testing.T) {
	a, b := shardJSON(t, 0), shardJSON(t, 1)
	if _, err := mergeTexts(a, b); err != nil {
		t.Fatalf("the shards as written: %v", err)
	}
	once := func(s, old, new string) string {
		t.Helper()
		if !strings.Contains(s, old) {
			t.Fatalf("%q is not in the shard", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	rows := strings.Index(a, `"rows": [`) + len(`"rows": [`)
	firstRow := a[rows : strings.Index(a, "\n    },\n")+len("\n    },")]
	for _, tc := range []struct {
		name string
		a, b string
		want string // a regular expression
	}{
		{"a row twice", a[:rows] + firstRow + a[rows:], b,
			`^a\.json:\d+:5: rows\[1\]: case 0 has a row already \(rows\[0\]\): one row per case$`},
		{"another question", a, once(b, `"find": "min-cost"`, `"find": "min-gpus"`),
			`^b\.json: find: "min-gpus" here, "min-cost" in a\.json: shards of one sweep differ only in their shard and rows$`},
		{"another SLO", a, once(b, `"slo": "ttft.p99\u003c500ms"`, `"slo": "ttft.p99\u003c1s"`),
			`^b\.json: slo: "ttft.p99<1s" here, "ttft.p99<500ms" in a\.json`},
		{"an SLO that does not parse", once(a, `"slo": "ttft.p99\u003c500ms"`, `"slo": "ttft.p99<500"`), b,
			`^a\.json:15:23: slo: 500: give the unit of the bound: us, ms or s$`},
		{"a negative latency", once(a, `"p99": 100`, `"p99": -4`), b,
			`^a\.json:\d+:5: rows\[0\]\.ttft_ms\.p99: -4 must be finite and not negative$`},
		{"negative GPUs", once(a, `"gpus": 1,`, `"gpus": -1,`), b, `^a\.json:\d+:5: rows\[0\]\.gpus: -1 is negative$`},
		{"a negative cost", once(a, `"cost_per_hour_usd": 3.95`, `"cost_per_hour_usd": -3.95`), b,
			`^a\.json:\d+:5: rows\[0\]\.cost_per_hour_usd: -3.95 must be finite and not negative$`},
		{"another price", a, strings.ReplaceAll(b, `"usd_per_gpu_hour": 3.95`, `"usd_per_gpu_hour": 2.49`),
			`^b\.json: prices: H100 at \$2\.49/h \(.*\) here, \$3\.95/h \(.*\) in a\.json$`},
		{"trailing garbage", a + "}garbage", b, `^a\.json:\d+:1: data after the document$`},
		{"a case of the wrong type", once(a, `"case": 0,`, `"case": "zero",`), b,
			`^a\.json:\d+:15: rows\[0\]\.case: want an integer, got a string$`},
		{"a fraction of a case", once(a, `"case": 0,`, `"case": 0.5,`), b, `^a\.json:\d+:15: rows\[0\]\.case: 0\.5 is not an integer$`},
		{"an unknown key", once(a, `"case": 0,`, `"case": 0, "cas": 1,`), b, `^a\.json:\d+:18: rows\[0\]: unknown key "cas"$`},
		{"a key twice", once(a, `"case": 0,`, `"case": 0, "case": 2,`), b, `^a\.json:\d+:18: rows\[0\]: key "case" is given twice$`},
		{"counts that do not add up", once(a, `"failed_requests": 0`, `"failed_requests": 5`), b,
			`^a\.json:\d+:5: rows\[0\]\.failed_requests: 1000 completed and 5 failed do not add up to 1000 injected$`},
		{"a question without an SLO", strings.ReplaceAll(a, `"slo": "ttft.p99\u003c500ms",`, ""), b,
			`^a\.json:\d+:\d+: find: min-cost needs an SLO, and the document has none$`},
		{"a grid row in a search", once(a, `"find": "min-cost"`, `"find": "max-rate", "precision": 0.01`), b,
			`^a\.json:\d+:5: rows\[0\]\.role: "grid": a max-rate search has no grid rows$`},
	} {
		_, err := mergeTexts(tc.a, tc.b)
		if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
}

// A merge computes every verdict again from the SLO and the rows: a shard
// that says a row meets an SLO it misses does not make it so.
func TestMergeJudgesRowsAgain(t *testing.T) {
	a, b := shardJSON(t, 0), shardJSON(t, 1)
	tight := func(s string) string {
		s = strings.ReplaceAll(s, `"slo": "ttft.p99\u003c500ms"`, `"slo": "ttft.p99\u003c1us"`)
		return strings.ReplaceAll(s, `"slo_met": false`, `"slo_met": true`)
	}
	d, err := mergeTexts(tight(a), tight(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Rows {
		if r.Met() || len(r.SLOFailures) == 0 {
			t.Errorf("case %d: met %v (failures %v) under ttft.p99<1us with ttft %+v", r.Case, r.Met(), r.SLOFailures, r.TTFT)
		}
	}
	if d.Answer.Met || d.NotMet() == nil {
		t.Errorf("answer %+v: want no case meeting ttft.p99<1us", d.Answer.Verdict)
	}
	costs := strings.ReplaceAll(a, `"cost_per_hour_usd": 3.95`, `"cost_per_hour_usd": 0.01`)
	if d, err = mergeTexts(costs, b); err != nil || *d.Rows[0].CostPerHour != 3.95 {
		t.Errorf("a cost the shard changed: %v, want the price × GPUs 3.95", err)
	}
}

// A merge reads each row's SLO classes back (an object of classes), judges
// a class bound on them, and refuses a class value of the wrong shape with
// its place.
func TestMergeReadsClasses(t *testing.T) {
	a, b := shardJSON(t, 0), shardJSON(t, 1)
	classes := func(s string, ttft string) string {
		s = strings.ReplaceAll(s, `"slo": "ttft.p99\u003c500ms"`, `"slo": "critical:ttft.p99\u003c500ms"`)
		return strings.ReplaceAll(s, `"slo_met":`, `"per_class": {"critical": {"count": 4, "completed_requests": 4, "ttft_p99_ms": `+ttft+`, "itl_mean_ms": 1, "e2e_p99_ms": 9}}, "slo_met":`)
	}
	d, err := mergeTexts(classes(a, "120"), classes(b, "120"))
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, r := range d.Rows {
		if r.Status == StatusOK {
			ok++
			if !r.Met() || r.PerClass["critical"].TTFTP99 != 120 {
				t.Errorf("case %d: met %v (%v), classes %+v", r.Case, r.Met(), r.SLOFailures, r.PerClass)
			}
		}
	}
	if ok == 0 {
		t.Error("no row ran ok: nothing was judged")
	}
	if _, err := mergeTexts(classes(a, `"fast"`), b); err == nil || !strings.Contains(err.Error(), `per_class.critical.ttft_p99_ms: want a number, got a string`) {
		t.Errorf("a class latency of the wrong type: %v", err)
	}
}
