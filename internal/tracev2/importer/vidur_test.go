package importer

import (
	"reflect"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// No real Vidur trace is in ../shared/data; this test runs when one is added
// there as vidur/*.csv and otherwise skips, saying so.
func TestVidurRealSample(t *testing.T) {
	path := shareddata.Path(t, "vidur/splitwise_code.csv")
	imp, err := NewVidur(path, openFile(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := collect(t, imp)
	// Vidur's splitwise_code.csv is the Azure 2023 code trace re-timed in
	// seconds: its first row is 0.0,4808,10.
	if len(recs) == 0 || recs[0].InputTokens != 4808 || recs[0].OutputTokens != 10 || recs[0].ArrivalTimeUs != 0 {
		t.Errorf("first record %+v, want arrival 0, 4808 in, 10 out", recs[0])
	}
}

// The Vidur sample is the Azure code sample converted to seconds, so both
// importers must agree on every record but the client id.
func TestVidurMatchesAzureSample(t *testing.T) {
	vpath := "testdata/vidur/azure_code_head20_vidur.csv"
	apath := "testdata/azure/AzureLLMInferenceTrace_code_head20.csv"
	v, err := NewVidur(vpath, openFile(t, vpath), Options{ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAzure(apath, openFile(t, apath), Options{ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	got, want := collect(t, v), collect(t, a)
	if len(got) != 20 || !reflect.DeepEqual(got, want) {
		t.Errorf("vidur records differ from azure records:\n got %+v\nwant %+v", got, want)
	}
}

func TestVidurPrefixBlocks(t *testing.T) {
	path := "testdata/vidur/prefix_blocks.csv"
	imp, err := NewVidur(path, openFile(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	const c = "vidur-prefix_blocks"
	rec := func(id, us int64, in, out int, ids []int64) tracev2.Record {
		return tracev2.Record{RequestID: id, ClientID: c, InputTokens: in, OutputTokens: out,
			ArrivalTimeUs: us, SendTimeUs: us, Status: "ok", HashIDs: ids}
	}
	want := []tracev2.Record{
		rec(0, 0, 1024, 16, []int64{0, 1}),
		rec(1, 250000, 1536, 8, []int64{0, 1, 2}), // "8.0" is a whole number
		rec(2, 199961506, 700, 1, []int64{0, 3}),  // 199.96150599999999 s rounds to the µs
		rec(3, 200500000, 10, 5, nil),             // empty block_hash_ids field
		rec(4, 10000000, 1200, 3, []int64{}),      // "1e1" s; "[]"
	}
	if got := collect(t, imp); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if h := imp.Header(); h.Server != nil || h.CreatedAt != "" || h.Mode != "real" || h.TraceVersion != 3 {
		t.Errorf("header = %+v", h)
	}
}
