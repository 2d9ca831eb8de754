package replay

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"servesim/internal/tracev2"
)

// TestPrefixCounts: a row's prompt is its own from the first hash id whose
// prefix no other row has; prefixes met twice, rows never counted, hash
// ids past the prompt's tokens and a table that overflowed declare
// nothing.
func TestPrefixCounts(t *testing.T) {
	p := newPrefixCounts(0)
	for _, ids := range [][]int64{{1, 2, 3}, {1, 2, 4}, {5}, {1, 2, 4, 6}, {7, 8}, {7, 8}} {
		p.add(ids)
	}
	for _, tc := range []struct {
		ids  []int64
		n    int
		want int
	}{
		{[]int64{1, 2, 3}, 300, 2},
		{[]int64{1, 2, 4}, 300, -1},   // all shared with the fourth row
		{[]int64{1, 2, 4, 6}, 400, 3}, // its last region is its own
		{[]int64{5}, 100, 0},          // all its own
		{[]int64{7, 8}, 200, -1},      // the same row twice
		{[]int64{1, 2, 3}, 200, -1},   // the third hash id is past its tokens
		{[]int64{1, 2, 3}, 201, 2},    // one token of it is in
		{[]int64{9}, 100, -1},         // never counted
		{[]int64{2, 1}, 100, -1},      // 2 alone was never a prefix
	} {
		if got := p.privateFrom(tc.ids, tc.n, 100); got != tc.want {
			t.Errorf("%v in %d tokens: own from hash id %d, want %d", tc.ids, tc.n, got, tc.want)
		}
	}
	if p.rows != 6 {
		t.Errorf("%d rows counted, want 6", p.rows)
	}
	var nilCounts *prefixCounts
	if got := nilCounts.privateFrom([]int64{5}, 100, 100); got != -1 {
		t.Errorf("no counts: own from %d, want -1", got)
	}

	// A table that cannot hold every prefix gives up: nothing is private.
	small := newPrefixCounts(0)
	small.limit = minPrefixSlots
	for i := range minPrefixSlots {
		small.add([]int64{int64(i)})
	}
	if !small.over || small.slots != nil {
		t.Fatalf("%d prefixes in a table of %d: over %v", minPrefixSlots, minPrefixSlots, small.over)
	}
	if got := small.privateFrom([]int64{3}, 100, 100); got != -1 {
		t.Errorf("overflowed table: own from %d, want -1", got)
	}
	big := newPrefixCounts(0)
	for i := range 3 * minPrefixSlots { // grows twice
		big.add([]int64{int64(i), 1})
	}
	for _, i := range []int64{0, minPrefixSlots, 3*minPrefixSlots - 1} {
		if got := big.privateFrom([]int64{i, 1}, 200, 100); got != 0 {
			t.Errorf("after growing: row %d own from %d, want 0", i, got)
		}
	}
}

// TestStreamedPrefixesChangeNothing: a streamed hash-id trace whose
// prefixes were counted by another reading (CountPrefixes) replays as the
// reference does (every block hashed, nothing private), and as the same
// trace read the usual way; rows that differ from those counted fail the
// replay with ErrRowsChanged.
func TestStreamedPrefixesChangeNothing(t *testing.T) {
	private := 0
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		region := []int{16, 32, 48, 40}[seed%4]
		recs := hashTrace(rng, region)
		dep := testDeploy(t, rng, int(seed%3), 60+rng.IntN(120), 4+rng.IntN(12))
		ref, sref := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: region, hashAll: true})
		got, sgot := replayStreamedRows(t, recs, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: region, UniqueIDs: true})
		sameRows(t, fmt.Sprintf("seed %d, reference / streamed with counts", seed), ref, got, sref, sgot)
		p := newPrefixCounts(0)
		for i := range recs {
			p.add(recs[i].HashIDs)
		}
		for i := range recs {
			if p.privateFrom(recs[i].HashIDs, recs[i].InputTokens, region) >= 0 {
				private++
			}
		}
	}
	if private == 0 {
		t.Fatal("no row of the traces has a prefix of its own: the counts were never used")
	}
	t.Logf("%d rows with a prefix of their own", private)

	rng := rand.New(rand.NewPCG(1, 1))
	recs := hashTrace(rng, 16)
	changed := slices.Clone(recs)
	changed[len(changed)/2].HashIDs = append([]int64{424242}, changed[len(changed)/2].HashIDs...)
	dep := testDeploy(t, rng, 0, 100, 8)
	tr, err := StreamTrace(RecordRows(recs).mustOpen(t), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr.CountPrefixes(context.Background(), RecordRows(changed).mustOpen(t), 0)
	_, err = Simulate(context.Background(), Config{Deploy: dep, Seed: 9, HashBlockTokens: 16, UniqueIDs: true}, tr, nil,
		func(*tracev2.Record, *tracev2.SimResult) error { return nil })
	if !errors.Is(err, ErrRowsChanged) || !errors.Is(tr.Finish(), ErrRowsChanged) {
		t.Fatalf("rows changed between the counting and the replay: %v, want ErrRowsChanged", err)
	}
}

// replayStreamedRows replays recs streamed, their prefixes counted from
// counted, like replayRows.
func replayStreamedRows(t *testing.T, recs, counted []tracev2.Record, cfg Config) ([]string, Outcome) {
	t.Helper()
	var rows []string
	sink := func(rec *tracev2.Record, res *tracev2.SimResult) error {
		rows = append(rows, fmt.Sprintf("%+v %+v", *rec, res))
		return nil
	}
	tr, err := StreamTrace(RecordRows(recs).mustOpen(t), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr.CountPrefixes(context.Background(), RecordRows(counted).mustOpen(t), 0)
	if tr.prefixes == nil {
		t.Fatal("the prefixes were not counted")
	}
	out, err := Simulate(context.Background(), cfg, tr, nil, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Finish(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	return rows, out
}

func (r RecordRows) mustOpen(t *testing.T) RowReader {
	rd, err := r.Open()
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// TestUnalignedRegionsDeclareNothing: with hash-id regions that are not
// whole KV blocks (31 tokens, 16-token blocks), the block holding a
// region's first token also holds the region before it, and two rows that
// share a system region and diverge on regions whose first drawn tokens
// collide share that block: nothing may be declared private there, and the
// replay hits it as the reference does.
func TestUnalignedRegionsDeclareNothing(t *testing.T) {
	const hT = 31
	tok := newTokens(9, hT)
	seen := map[int32]int64{}
	buf := make([]int32, 1)
	var h1, h2 int64
	for h := int64(1000); h1 == h2; h++ { // two regions that begin with the same token (1 in 128000 a pair)
		tok.hashBlocks(buf, []int64{h})
		if o, ok := seen[buf[0]]; ok {
			h1, h2 = o, h
		}
		seen[buf[0]] = h
	}
	recs := []tracev2.Record{
		{RequestID: 0, ArrivalTimeUs: 0, InputTokens: 70, OutputTokens: 4, Status: "ok", HashIDs: []int64{7, h1}},
		{RequestID: 1, ArrivalTimeUs: 10_000_000, InputTokens: 70, OutputTokens: 4, Status: "ok", HashIDs: []int64{7, h2}},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for kind := 0; kind < 3; kind++ {
		dep := testDeploy(t, rng, kind, 400, 8)
		ref, sref := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: hT, hashAll: true})
		got, sgot := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: hT, UniqueIDs: true})
		sameRows(t, fmt.Sprintf("kind %d, regions of 31 tokens", kind), ref, got, sref, sgot)
		if sref.Summary.CacheHitRate == 0 {
			t.Fatalf("kind %d: the second row does not hit the shared block: the case tests nothing", kind)
		}
	}
}

// changingRows is a trace whose rows differ on their second reading.
type changingRows struct {
	first, again []tracev2.Record
	opened       int
}

func (c *changingRows) Open() (RowReader, error) {
	c.opened++
	if c.opened == 1 {
		return RecordRows(c.first).Open()
	}
	return RecordRows(c.again).Open()
}

// TestChangedRowsFail: a trace whose hash ids change between its first
// reading (which counted their prefixes) and the replay's fails with
// ErrRowsChanged rather than be replayed with counts that are not its own.
func TestChangedRowsFail(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	recs := hashTrace(rng, 16)
	changed := slices.Clone(recs)
	changed[3].HashIDs = append([]int64{31337}, changed[3].HashIDs...)
	dep := testDeploy(t, rng, 0, 200, 8)
	for _, again := range [][]tracev2.Record{recs, changed} {
		tr, err := NewTrace(&changingRows{first: recs, again: again}, TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Simulate(context.Background(), Config{Deploy: dep, Seed: 9, HashBlockTokens: 16, UniqueIDs: true}, tr, nil,
			func(*tracev2.Record, *tracev2.SimResult) error { return nil })
		if changedRows := &again[3] != &recs[3]; changedRows != errors.Is(err, ErrRowsChanged) {
			t.Errorf("rows changed %v: replay error %v", changedRows, err)
		}
	}
}

// TestCountPrefixesCancelled: a count cancelled (Ctrl+C) before the end of
// the rows declares nothing.
func TestCountPrefixesCancelled(t *testing.T) {
	recs := hashTrace(rand.New(rand.NewPCG(4, 4)), 16)
	for _, cancel := range []bool{false, true} {
		ctx, stop := context.WithCancel(context.Background())
		if cancel {
			stop()
		}
		tr, err := StreamTrace(RecordRows(recs).mustOpen(t), TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr.CountPrefixes(ctx, RecordRows(recs).mustOpen(t), 0)
		stop()
		if counted := tr.prefixes != nil; counted == cancel {
			t.Errorf("cancelled %v: counted %v", cancel, counted)
		}
		tr.Close()
	}
}
