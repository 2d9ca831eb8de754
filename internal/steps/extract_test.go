package steps

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// server is a synthetic continuous-batching server: requests join at a step
// (their prompt computed in chunks of what the budget leaves after the
// decodes), every step ends with one token for every running request, and
// a step costs 1000 µs + 100 µs per decode + 2 µs per prompt token.
type server struct {
	budget int
	reqs   []simReq
}

type simReq struct {
	join, prompt, output int
}

// truth is one generated step.
type truth struct {
	start, end   int64
	decodes      int
	prompts      int // prompt pieces in it
	finishing    []int64
	promptTokens int
}

// run returns the requests' chunk times (one per token) and the steps.
func (s *server) run() ([]Request, []truth) {
	n := len(s.reqs)
	done := make([]int, n) // prompt tokens computed
	toks := make([]int, n) // tokens produced
	out := make([]Request, n)
	for i, r := range s.reqs {
		out[i] = Request{ID: int64(i), Prompt: r.prompt, Output: r.output}
	}
	var steps []truth
	t := int64(0)
	for step := 0; ; step++ {
		var tr truth
		left := s.budget
		var produced []int
		for i, r := range s.reqs {
			if r.join > step || toks[i] == r.output {
				continue
			}
			if done[i] == r.prompt {
				tr.decodes++
				produced = append(produced, i)
				left--
			}
		}
		for i, r := range s.reqs {
			if r.join > step || done[i] == r.prompt {
				continue
			}
			take := r.prompt - done[i]
			if s.budget > 0 {
				take = min(take, left)
			}
			if take <= 0 {
				continue
			}
			left -= take
			done[i] += take
			tr.prompts++
			tr.promptTokens += take
			if done[i] == r.prompt {
				produced = append(produced, i)
				tr.finishing = append(tr.finishing, int64(i))
			}
		}
		if len(produced) == 0 {
			if slices.IndexFunc(s.reqs, func(r simReq) bool { return r.join > step }) < 0 {
				return out, steps
			}
			continue // idle until the next request joins
		}
		tr.start = t
		t += 1000 + 100*int64(tr.decodes) + 2*int64(tr.promptTokens)
		tr.end = t
		for _, i := range produced {
			toks[i]++
			out[i].Chunks = append(out[i].Chunks, t)
		}
		steps = append(steps, tr)
	}
}

func sampleServer(budget int) *server {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &server{budget: budget}
	for i := range 40 {
		s.reqs = append(s.reqs, simReq{join: i * 3, prompt: 50 + rng.IntN(900), output: 5 + rng.IntN(60)})
	}
	return s
}

// TestExtractExact: with every chunk of every request on time, every step
// after the first is recovered with its time and batch.
func TestExtractExact(t *testing.T) {
	for _, budget := range []int{0, 512} {
		s := sampleServer(budget)
		reqs, want := s.run()
		ex, err := Extract(reqs, Options{WindowUs: 0, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Explained != ex.Chunks || ex.Consistent != len(reqs) || ex.Sparse != 0 {
			t.Errorf("budget %d: explained %d of %d chunks, %d of %d requests consistent, %d sparse", budget, ex.Explained, ex.Chunks, ex.Consistent, len(reqs), ex.Sparse)
		}
		// The first step has no start; an idle gap breaks nothing here (the
		// requests overlap), so every other step is found.
		if len(ex.Steps) != len(want)-1 {
			t.Fatalf("budget %d: %d steps, want %d", budget, len(ex.Steps), len(want)-1)
		}
		for i, got := range ex.Steps {
			w := want[i+1]
			var fin []int64
			tokens := 0
			for _, p := range got.Prefills {
				tokens += p.NewTokens
				if p.Finishes {
					fin = append(fin, p.ID)
				}
			}
			if got.StartUs != w.start || got.EndUs != w.end || got.Decodes != w.decodes || !slices.Equal(fin, w.finishing) {
				t.Errorf("budget %d step %d: %+v, want %+v", budget, i+1, got, w)
			}
			if len(got.Prefills) != w.prompts || tokens != w.promptTokens {
				t.Errorf("budget %d step %d: %d prompts of %d tokens, want %d of %d", budget, i+1, len(got.Prefills), tokens, w.prompts, w.promptTokens)
			}
		}
	}
}

// TestExtractChunkedPrompt: a prompt longer than the budget is split over
// the steps before its first token, as many as it needs.
func TestExtractChunkedPrompt(t *testing.T) {
	s := &server{budget: 300, reqs: []simReq{{0, 100, 30}, {2, 700, 5}}}
	reqs, want := s.run()
	ex, err := Extract(reqs, Options{Budget: 300})
	if err != nil {
		t.Fatal(err)
	}
	var tokens []int
	for i, st := range ex.Steps {
		n := 0
		for _, p := range st.Prefills {
			n += p.NewTokens
		}
		tokens = append(tokens, n)
		if n != want[i+1].promptTokens {
			t.Errorf("step %d: %d prompt tokens, want %d", i+1, n, want[i+1].promptTokens)
		}
	}
	if t.Failed() {
		t.Logf("prompt tokens per step: %v", tokens)
	}
}

// TestExtractNoisy: chunks reach the client up to 150 µs late, at random;
// with a 400 µs window every step is still found, its time within 300 µs.
func TestExtractNoisy(t *testing.T) {
	s := sampleServer(0)
	reqs, want := s.run()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range reqs {
		for k := range reqs[i].Chunks {
			reqs[i].Chunks[k] += rng.Int64N(150)
		}
		slices.Sort(reqs[i].Chunks)
	}
	ex, err := Extract(reqs, Options{WindowUs: 400})
	if err != nil {
		t.Fatal(err)
	}
	if ex.ExplainedShare() != 1 || len(ex.Steps) != len(want)-1 {
		t.Fatalf("explained %.3f, %d steps (want all chunks, %d steps)", ex.ExplainedShare(), len(ex.Steps), len(want)-1)
	}
	for i, got := range ex.Steps {
		w := want[i+1]
		if d := got.DurationUs() - (w.end - w.start); d < -300 || d > 300 || got.Decodes != w.decodes {
			t.Errorf("step %d: %d µs with %d decodes, want %d µs with %d", i+1, got.DurationUs(), got.Decodes, w.end-w.start, w.decodes)
		}
	}
}

// TestExtractFirstAndLast: with only each request's first and last chunk,
// the steps found are true ones, and every request is consistent.
func TestExtractFirstAndLast(t *testing.T) {
	// Short requests, so that their first and last chunks tie ends together.
	rng := rand.New(rand.NewPCG(5, 6))
	s := &server{}
	for i := range 40 {
		s.reqs = append(s.reqs, simReq{join: 2 * i, prompt: 50 + rng.IntN(400), output: 2 + rng.IntN(3)})
	}
	reqs, want := s.run()
	for i := range reqs {
		c := reqs[i].Chunks
		reqs[i].Chunks = []int64{c[0], c[len(c)-1]}
	}
	ex, err := Extract(reqs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sparse := 0 // a request of two tokens has all its chunks
	for _, r := range reqs {
		if r.Output > 2 {
			sparse++
		}
	}
	if ex.ExplainedShare() != 1 || ex.Sparse != sparse {
		t.Errorf("explained %.3f, %d sparse; want all, %d", ex.ExplainedShare(), ex.Sparse, sparse)
	}
	byEnd := map[int64]truth{}
	for _, w := range want {
		byEnd[w.end] = w
	}
	for _, got := range ex.Steps {
		w, ok := byEnd[got.EndUs]
		if !ok || w.start != got.StartUs || w.decodes != got.Decodes {
			t.Errorf("step %+v is no true step (%+v)", got, w)
		}
	}
	if len(ex.Steps) < len(want)/5 {
		t.Errorf("%d of %d steps found from first and last chunks, want at least a fifth", len(ex.Steps), len(want))
	}
}

// TestExtractContradiction: a request whose chunks say fewer steps than
// another's between the same ends is not explained.
func TestExtractContradiction(t *testing.T) {
	reqs := []Request{
		{ID: 1, Prompt: 10, Output: 3, Chunks: []int64{1000, 2000, 3000}},
		{ID: 2, Prompt: 10, Output: 4, Chunks: []int64{1000, 3000}}, // says 3 steps from 1000 to 3000
	}
	ex, err := Extract(reqs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Consistent != 1 || ex.Explained != 3 || ex.Chunks != 5 {
		t.Errorf("consistent %d, explained %d of %d; want 1, 3 of 5", ex.Consistent, ex.Explained, ex.Chunks)
	}
	if _, err := Extract(reqs, Options{WindowUs: -1}); err == nil {
		t.Error("a negative window is no error")
	}
}
