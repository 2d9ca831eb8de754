package replay

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/kvcache"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

func TestHashBlocks(t *testing.T) {
	tok := newTokens(7, 0)
	prompt := func(id int64, n int, hashes ...int64) []int32 {
		ids, _, _ := tok.prompt(new(promptBuf), &tracev2.Record{RequestID: id, InputTokens: n, HashIDs: hashes}, false, false, nil, false)
		return ids
	}
	a := prompt(1, 1500, 10, 20, 30)
	b := prompt(2, 1400, 10, 20, 99)
	c := prompt(3, 512, 20)
	d := prompt(4, 1000, 10) // fewer hash ids than blocks: the rest is fresh
	e := prompt(5, 300, 10, 20)
	tests := []struct {
		name       string
		x, y       []int32
		equal      int // leading ids that must agree
		differFrom int // and from here on they must not
	}{
		{"shared blocks 10, 20", a, b, 1024, 1024},
		// The same tokens: the KV cache's chained block hashes still tell
		// them apart, since their prefixes differ.
		{"hash 20's block wherever it is", a[512:1024], c, 512, 512},
		{"hash 10 then fresh", a, d, 512, 512},
		{"partial last block", a, e, 300, 300},
	}
	for _, tt := range tests {
		if tt.equal > 0 && !slices.Equal(tt.x[:tt.equal], tt.y[:tt.equal]) {
			t.Errorf("%s: the first %d ids differ", tt.name, tt.equal)
		}
		n := min(len(tt.x), len(tt.y))
		if tt.differFrom < n && slices.Equal(tt.x[tt.differFrom:n], tt.y[tt.differFrom:n]) {
			t.Errorf("%s: ids from %d on are shared", tt.name, tt.differFrom)
		}
	}
	if len(a) != 1500 || len(e) != 300 {
		t.Errorf("prompt lengths %d %d, want 1500 300", len(a), len(e))
	}
	if again, _, _ := newTokens(7, 0).prompt(new(promptBuf), &tracev2.Record{RequestID: 1, InputTokens: 1500, HashIDs: []int64{10, 20, 30}}, false, false, nil, false); !slices.Equal(again, a) {
		t.Error("the same seed gives other ids")
	}
	if other, _, _ := newTokens(8, 0).prompt(new(promptBuf), &tracev2.Record{RequestID: 1, InputTokens: 1500, HashIDs: []int64{10, 20, 30}}, false, false, nil, false); slices.Equal(other[:512], a[:512]) {
		t.Error("another seed gives the same ids")
	}
	small, _, _ := newTokens(7, 16).prompt(new(promptBuf), &tracev2.Record{RequestID: 1, InputTokens: 64, HashIDs: []int64{10, 20, 30, 40}}, false, false, nil, false)
	if !slices.Equal(small[:16], a[:16]) || slices.Equal(small[16:32], a[16:32]) {
		t.Error("with 16-token hash blocks, block 2 must start the sequence of hash 20")
	}
}

func TestRememberKeepsTheLatestRound(t *testing.T) {
	tok := newTokens(1, 0)
	tok.remember("s", 2, []int32{1, 2}, []int32{3}, 1, nil)
	tok.remember("s", 1, []int32{9}, nil, 0, nil)
	if got := tok.sessions["s"]; got.round != 2 || !slices.Equal(got.ids, []int32{1, 2, 3}) {
		t.Errorf("context %+v, want round 2's [1 2 3]", got)
	}
	tok.remember("s", 2, []int32{1, 2}, []int32{3, 4}, 1, nil) // same round, actual output
	if got := tok.sessions["s"]; !slices.Equal(got.ids, []int32{1, 2, 3}) {
		t.Errorf("context %v, want [1 2 3]", got.ids)
	}
}

// TestMooncakePrefixSharing: the Mooncake sample replays with prefix cache
// hits, and only because of its hash ids.
func TestMooncakePrefixSharing(t *testing.T) {
	f, err := os.Open("../tracev2/importer/testdata/mooncake/conversation_trace_head20.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := importer.NewMooncake("mooncake", f, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all []tracev2.Record
	for rec, err := range importer.All(imp) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rec)
	}
	dep, err := deploy.Resolve(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	hitRate := func(recs []tracev2.Record) float64 {
		tr, err := NewTrace(RecordRows(recs), TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := Simulate(context.Background(), Config{Deploy: dep, Seed: 42}, tr, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.Summary.InjectedRequests != int64(len(all)) {
			t.Fatalf("injected %d, want %d", out.Summary.InjectedRequests, len(all))
		}
		return out.Summary.CacheHitRate
	}
	stripped := slices.Clone(all)
	for i := range stripped {
		stripped[i].HashIDs = nil
	}
	if with, without := hitRate(slices.Clone(all)), hitRate(stripped); with <= 0 || without != 0 {
		t.Errorf("cache hit rate %v with hash ids, %v without: want > 0 and 0", with, without)
	}
}

func testDeployment(t *testing.T) *deploy.Resolved {
	t.Helper()
	dep, err := deploy.Resolve(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	return dep
}

// TestChainsMatchAsTheIDsDo: the regions chains names for hash-id rows
// cover the rows' full blocks inside their hash-id regions, each following
// its predecessor's last hash, and two rows' hashes of block k agree
// exactly when their ids up to the end of block k do (so the KV cache
// matches them as it would the ids' own hashes), across block sizes and
// partial last regions; they are never the ids' own hashes (a fresh
// block's cannot meet them).
func TestChainsMatchAsTheIDsDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, b := range []int{16, 32, 8} {
		tok := newTokens(5, 64)
		tok.chains = newChains(tok, b)
		ref := newTokens(5, 64)
		type row struct {
			ids    []int32
			hashes []kvcache.Hash
		}
		var rows []row
		agree := 0
		for i := 0; i < 300; i++ {
			hashes := make([]int64, 1+rng.IntN(6))
			for k := range hashes {
				hashes[k] = int64(rng.IntN(4))
			}
			rec := &tracev2.Record{RequestID: int64(i), InputTokens: 1 + rng.IntN(len(hashes)*64+40), HashIDs: hashes}
			ids, _, _ := ref.prompt(new(promptBuf), rec, false, false, nil, false)
			regions, blocks := tok.chains.known(nil, hashes, len(ids), 64)
			if want := min(len(ids), len(hashes)*64) / b; blocks != want {
				t.Fatalf("block %d row %d: %d known blocks, want %d", b, i, blocks, want)
			}
			got := (&kvcache.Seq{Known: regions}).BlockHashes(blocks, b)
			var last kvcache.Hash
			for _, r := range regions {
				if r.Prev != last {
					t.Fatalf("block %d row %d: a region does not follow its predecessor's last hash", b, i)
				}
				last = r.Last()
			}
			seq := kvcache.Seq{Prompt: ids}
			for k, h := range seq.BlockHashes(blocks, b) {
				if got[k] == h {
					t.Fatalf("block %d row %d: block %d has the hash of its ids", b, i, k)
				}
			}
			from := max(0, len(rows)-40)
			for j, o := range rows[from:] {
				for k := 0; k < min(blocks, len(o.hashes)); k++ {
					same := slices.Equal(ids[:(k+1)*b], o.ids[:(k+1)*b])
					if (got[k] == o.hashes[k]) != same {
						t.Fatalf("block %d rows %d and %d: block %d hashes agree %v, ids %v", b, i, from+j, k, !same, same)
					}
					if same {
						agree++
					}
				}
			}
			rows = append(rows, row{ids, got})
		}
		if agree < 1000 {
			t.Errorf("block %d: only %d shared blocks met", b, agree)
		}
	}
	if newChains(newTokens(5, 64), 48) != nil {
		t.Error("chains for blocks that straddle regions")
	}
}
