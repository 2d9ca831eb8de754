package workload

import (
	"math/rand/v2"
	"strconv"
)

// MaxPromptTokens caps an accumulated session prompt (16,777,216 tokens):
// a round that would exceed it is not generated and its session ends
// cancelled.
const MaxPromptTokens = 1 << 24

// draft is a request before it is numbered and its token ids are
// materialised: everything the client's streams decided about it.
type draft struct {
	at        int64
	in, out   int
	rr        float64
	seed      uint64 // token stream seed of this request / round
	sess      *session
	round     int
	cost      int64 // slots of num_requests it takes (max_rounds for a closed session start)
	promptLen int   // prompt tokens (prefix included)
}

// session is one multi-turn session or concurrency user.
type session struct {
	id    string
	cc    *compiledClient
	pcg   rand.PCG
	rng   *rand.Rand // over pcg
	seq   int64      // creation order within its client
	round int        // index of the last drafted or created round
	at    int64      // open sessions: arrival of the last drafted round, then of the next one
	cap   int        // closed sessions: rounds allowed by num_requests (its reservation)

	// The last drafted round: prompt length (prefix included) and output.
	draftLen int
	draftOut int

	// The last built round, for context accumulation (prompt is nil for a
	// shape source; promptLen is its length all the same).
	prompt    []int32
	promptLen int
	lastIn    int
	lastSeed  uint64
	lastOut   int

	// Open sessions: rounds emitted and finished, and why emission stopped.
	emitted, finished int
	closed            bool         // no further round will be emitted
	cut               SessionState // "" (all rounds) or why it was cut short
	failed            bool

	started    bool
	state      SessionState // "" while active
	prev, next *session     // the Source's list of active sessions
}

// clientGen produces one client's drafts in arrival order, one pending at
// a time, from the client's stream.
type clientGen struct {
	cc  *compiledClient
	dry bool // counting only: closed sessions and users create no session
	// onCut is told about an open session cut short while its last emitted
	// round may already have finished (nil when not tracking).
	onCut   func(*session)
	rng     *rand.Rand
	horizon int64
	pending draft
	ok      bool // pending is valid

	t         int64 // last arrival (requests or session starts)
	seq       int64 // sessions created
	startOK   bool  // open sessions: nextStart is a start to come
	nextStart int64
	waiting   []*session // open sessions by (at, seq): a binary heap
	nextUser  int
}

func newClientGen(cc *compiledClient, seed uint64, horizon int64, dry bool) *clientGen {
	g := &clientGen{cc: cc, rng: newRand(seed), horizon: horizon, dry: dry}
	if cc.kind == genOpenSessions {
		g.nextStart = g.cc.arr.next(g.rng)
		g.startOK = !g.beyond(g.nextStart)
	}
	g.advance()
	return g
}

// beyond reports whether an arrival at t must not be generated.
func (g *clientGen) beyond(t int64) bool {
	return t > maxTimeUs || (g.horizon > 0 && t > g.horizon)
}

// newSession starts a session with its own stream, seeded by one draw of
// the client's stream.
func (g *clientGen) newSession() *session {
	s := &session{cc: g.cc, seq: g.seq, cap: g.cc.maxRounds}
	seed := g.rng.Uint64()
	s.pcg.Seed(seed, seed^pcgIncrement)
	s.rng = rand.New(&s.pcg)
	g.seq++
	return s
}

// drawRound fills a draft's lengths, ratio and token seed from r, in this
// order: input length, output length, reason ratio (if any), token seed.
func drawRound(cc *compiledClient, r *rand.Rand, d *draft) {
	d.in = cc.in.sample(r)
	d.out = cc.out.sample(r)
	d.rr = 0
	if cc.ratio != nil {
		d.rr = cc.ratio.sampleRatio(r)
	}
	d.seed = r.Uint64()
}

// advance computes the next pending draft, or clears ok.
func (g *clientGen) advance() {
	cc := g.cc
	d := &g.pending
	*d = draft{cost: 1}
	g.ok = false
	switch cc.kind {
	case genPlain:
		g.t = satAdd(g.t, cc.arr.next(g.rng))
		if g.beyond(g.t) {
			return
		}
		d.at = g.t
		drawRound(cc, g.rng, d)
	case genClosedSessions:
		if cc.single && g.seq > 0 {
			return
		}
		g.t = satAdd(g.t, cc.arr.next(g.rng))
		if g.beyond(g.t) {
			return
		}
		d.at, d.cost = g.t, int64(cc.maxRounds)
		if g.dry {
			// A count needs only the arrival and the cost; keep the client
			// stream aligned by drawing the session seed all the same.
			g.rng.Uint64()
			g.seq++
			break
		}
		s := g.newSession()
		d.sess = s
		drawRound(cc, s.rng, d)
	case genUsers:
		n := cc.c.Concurrency
		if g.nextUser >= n {
			return
		}
		u := g.nextUser
		at := userStartUs(u, n, cc.thinkUs)
		if g.beyond(at) {
			return
		}
		g.nextUser++
		d.at = at
		if g.dry {
			g.rng.Uint64()
			break
		}
		s := g.newSession()
		s.id = "concurrency_" + cc.c.ID + "_user_" + strconv.Itoa(u)
		d.sess = s
		drawRound(cc, s.rng, d)
	case genOpenSessions:
		if !g.advanceOpen(d) {
			return
		}
	}
	d.promptLen = len(cc.prefix) + d.in
	if s := d.sess; s != nil && cc.accumulate && d.round > 0 {
		d.promptLen = s.draftLen + s.draftOut + d.in
	}
	if s := d.sess; s != nil {
		s.draftLen, s.draftOut = d.promptLen, d.out
	}
	g.ok = true
}

// advanceOpen drafts the earliest of: the next round of a waiting session,
// or a new session's round 0. Ties go to the waiting session (it was created
// first).
func (g *clientGen) advanceOpen(d *draft) bool {
	cc := g.cc
	for {
		var s *session
		if len(g.waiting) > 0 && (!g.startOK || g.waiting[0].at <= g.nextStart) {
			s = g.popWaiting()
			s.round++
			d.at, d.sess, d.round = s.at, s, s.round
			drawRound(cc, s.rng, d)
			if cc.accumulate && s.draftLen+s.draftOut+d.in > MaxPromptTokens {
				s.closed, s.cut = true, SessionCancelled
				if g.onCut != nil {
					g.onCut(s)
				}
				continue
			}
		} else if g.startOK {
			s = g.newSession()
			s.at = g.nextStart
			d.at, d.sess, d.round = s.at, s, 0
			drawRound(cc, s.rng, d)
			if cc.single {
				g.startOK = false
			} else {
				g.nextStart = satAdd(g.nextStart, cc.arr.next(g.rng))
				g.startOK = !g.beyond(g.nextStart)
			}
		} else {
			return false
		}
		// Schedule the session's next round at this round + think time.
		switch next := satAdd(s.at, cc.thinkUs); {
		case s.round+1 >= cc.maxRounds:
			s.closed = true
		case g.beyond(next):
			s.closed, s.cut = true, SessionHorizonInterrupted
		default:
			s.at = next
			g.pushWaiting(s)
		}
		return true
	}
}

func waitLess(a, b *session) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (g *clientGen) pushWaiting(s *session) {
	h := append(g.waiting, s)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !waitLess(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	g.waiting = h
}

func (g *clientGen) popWaiting() *session {
	h := g.waiting
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = nil
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && waitLess(h[r], h[l]) {
			m = r
		}
		if !waitLess(h[m], h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	g.waiting = h
	return top
}
