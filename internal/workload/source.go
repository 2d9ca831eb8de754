package workload

import "strconv"

// Source is the lazy stream of a workload's requests (docs/workload.md §9). Next
// returns the pre-generated requests in arrival order; OnComplete and
// OnFailed return the follow-ups that completions cause. Memory is constant
// in num_requests: one pending draft per client, plus the sessions that are
// active. A Source is not safe for concurrent use.
type Source struct {
	w      *Workload
	dry    bool // count only: no token ids, no session tracking
	noIDs  bool // lengths only: requests carry no token ids (NewShapeSource)
	gens   []*clientGen
	heap   []int // indices of gens with a pending draft, by (at, index)
	limit  int64 // num_requests; 0 = none
	used   int64 // slots of limit taken
	nextID int64
	done   bool // Next returns no more requests
	toks   tokenStream

	drained   bool  // generation ran to its end (nextID is the pre-generated count)
	pregen    int64 // pre-generated count, -1 until known
	followUps int64 // follow-ups created so far

	shardIndex, shardCount int64 // Share: this Source's slice of a sharded run's follow-ups

	live         map[int64]*session // session requests in flight, by id
	first, last  *session           // active sessions in start order
	counts       SessionCounts
	onSessionEnd func(SessionEnd)
}

// NewSource starts the request stream from the beginning.
func (w *Workload) NewSource() *Source { return w.newSource(false) }

// NewShapeSource starts a stream of the same requests without their token
// ids (PromptIDs is nil; lengths, times, sessions and follow-ups are those
// of NewSource), for a consumer that synthesises its own ids, as the
// simulator's replay does: materialising ids it would throw away was a
// sixth of a whole run's time.
func (w *Workload) NewShapeSource() *Source {
	s := w.newSource(false)
	s.noIDs = true
	return s
}

func (w *Workload) newSource(dry bool) *Source {
	s := &Source{w: w, dry: dry, limit: w.Spec.NumRequests, pregen: -1}
	if !dry {
		s.live = map[int64]*session{}
	}
	// One stream per client, seeded in spec order from workload-gen, so a
	// client appended to a spec changes no other client's requests.
	wg := NewStream(w.Spec.Seed, "workload-gen")
	for i := range w.clients {
		g := newClientGen(&w.clients[i], wg.Uint64(), w.Spec.HorizonUs, dry)
		if !dry {
			g.onCut = s.maybeEndOpen
		}
		s.gens = append(s.gens, g)
		if g.ok {
			s.heap = append(s.heap, i)
			s.up(len(s.heap) - 1)
		}
	}
	return s
}

// Next returns the next pre-generated request, or false when there are no
// more (num_requests reached, horizon passed, or every client done). The
// caller owns the Request but must not modify PromptIDs: accumulating
// sessions build the next round's prompt on it.
func (s *Source) Next() (*Request, bool) {
	if s.done {
		return nil, false
	}
	if len(s.heap) == 0 {
		s.done, s.drained = true, true
		return nil, false
	}
	if s.limit > 0 && s.used >= s.limit {
		s.stop()
		return nil, false
	}
	gi := s.heap[0]
	g := s.gens[gi]
	d := &g.pending
	cost := d.cost
	if s.limit > 0 && cost > s.limit-s.used {
		cost = s.limit - s.used
	}
	s.used += cost
	id := s.nextID
	s.nextID++
	if d.sess != nil && g.cc.kind == genClosedSessions {
		d.sess.cap = int(cost)
	}
	var r *Request
	if !s.dry {
		r = s.build(g.cc, d, id, d.sess != nil && d.round > 0, 0)
		if d.sess != nil {
			s.track(d.sess, r)
		}
	}
	g.advance()
	if g.ok {
		s.down(0)
	} else {
		last := len(s.heap) - 1
		s.heap[0] = s.heap[last]
		s.heap = s.heap[:last]
		if last > 0 {
			s.down(0)
		}
	}
	return r, true
}

// Pregenerated is the number of requests Next returns in all (follow-ups
// are numbered from it). Unless the stream has already ended it is found by
// a counting pass over the workload that materialises no token ids
// (constant memory), done at most once. A progress bar may use it.
func (s *Source) Pregenerated() int64 {
	switch {
	case s.pregen >= 0:
	case s.drained:
		s.pregen = s.nextID
	default:
		c := s.w.newSource(true)
		for {
			if _, ok := c.Next(); !ok {
				break
			}
		}
		s.pregen = c.nextID
	}
	return s.pregen
}

// build materialises a draft: numbers it and fills its token ids. For a
// later round of an accumulating session the prompt is the previous round's
// prompt, then prevOut of its output ids (open sessions: all of them), then
// the new input ids (doc.go).
func (s *Source) build(cc *compiledClient, d *draft, id int64, followOn bool, prevOut int) *Request {
	c := cc.c
	sess := d.sess
	var prompt []int32
	var n int // prompt tokens
	if sess != nil && cc.accumulate && followOn {
		if cc.kind == genOpenSessions {
			prevOut = sess.lastOut
		}
		n = sess.promptLen + prevOut + d.in
		if !s.noIDs {
			prev := sess.prompt
			prompt = make([]int32, n)
			copy(prompt, prev)
			s.toks.reset(sess.lastSeed)
			s.toks.skip(sess.lastIn)
			s.toks.fill(prompt[len(prev) : len(prev)+prevOut])
			s.toks.reset(d.seed)
			s.toks.fill(prompt[len(prev)+prevOut:])
		}
	} else {
		n = len(cc.prefix) + d.in
		if !s.noIDs {
			prompt = make([]int32, n)
			copy(prompt, cc.prefix)
			s.toks.reset(d.seed)
			s.toks.fill(prompt[len(cc.prefix):])
		}
	}
	r := &Request{
		ID: id, Client: cc.index, ClientID: c.ID, TenantID: c.TenantID, SLOClass: c.SLOClass,
		Model: c.Model, ArrivalUs: d.at, PromptIDs: prompt, PrefixGroup: c.PrefixGroup,
		PrefixLength: len(cc.prefix), InputTokens: n - len(cc.prefix),
		OutputTokens: d.out, MaxOutputLen: d.out, Streaming: c.Streaming, ReasonRatio: d.rr,
		SLOTargetUs: c.SLOTargetUs, RoundIndex: d.round, tokSeed: d.seed, newIn: d.in,
		ImageTokens: d.mm[0], AudioTokens: d.mm[1], VideoTokens: d.mm[2],
	}
	if c.TimeoutUs > 0 {
		r.DeadlineUs = satAdd(d.at, c.TimeoutUs)
	}
	if sess != nil {
		r.ThinkTimeUs = cc.thinkUs
		if cc.accumulate {
			sess.prompt, sess.promptLen = prompt, n
		}
		sess.lastIn, sess.lastOut, sess.lastSeed = d.in, d.out, d.seed
	}
	return r
}

// track registers an emitted session request.
func (s *Source) track(sess *session, r *Request) {
	if r.RoundIndex == 0 {
		if sess.id == "" {
			sess.id = "sess_" + strconv.FormatInt(r.ID, 10)
		}
		s.start(sess)
	}
	r.SessionID = sess.id
	sess.emitted++
	s.live[r.ID] = sess
}

// stop ends generation at num_requests: open sessions with rounds still to
// come are cut short (budget-exhausted once their emitted rounds finish).
func (s *Source) stop() {
	s.done, s.drained = true, true
	if s.dry {
		return
	}
	cut := func(sess *session) {
		if sess != nil && sess.started && sess.state == "" && sess.cc.kind == genOpenSessions {
			sess.closed, sess.cut = true, SessionBudgetExhausted
			s.maybeEndOpen(sess)
		}
	}
	for _, g := range s.gens {
		if g.ok {
			cut(g.pending.sess)
		}
		for _, sess := range g.waiting {
			cut(sess)
		}
	}
}

func (s *Source) less(i, j int) bool {
	a, b := s.gens[s.heap[i]], s.gens[s.heap[j]]
	if a.pending.at != b.pending.at {
		return a.pending.at < b.pending.at
	}
	return a.cc.index < b.cc.index
}

func (s *Source) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.heap[i], s.heap[p] = s.heap[p], s.heap[i]
		i = p
	}
}

func (s *Source) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.heap[i], s.heap[m] = s.heap[m], s.heap[i]
		i = m
	}
}
