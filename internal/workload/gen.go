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
	mm        [3]int // image, audio and video tokens included in in
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
	smp   *samplers // the lengths of the window the session started in
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
	ph        int   // windowed clients: the phase of t
	drawn     int64 // arrivals drawn (rate ramps)
	seq       int64 // sessions created
	startOK   bool  // open sessions: nextStart is a start to come
	nextStart int64
	startSmp  *samplers
	waiting   []*session // open sessions by (at, seq): a binary heap
	nextUser  int
}

func newClientGen(cc *compiledClient, seed uint64, horizon int64, dry bool) *clientGen {
	g := &clientGen{cc: cc, rng: newRand(seed), horizon: horizon, dry: dry}
	if cc.kind == genOpenSessions {
		g.nextStart, g.startSmp, g.startOK = g.nextArrival(0)
		g.startOK = g.startOK && !g.beyond(g.nextStart)
	}
	g.advance()
	return g
}

// beyond reports whether an arrival at t must not be generated.
func (g *clientGen) beyond(t int64) bool {
	return t > maxTimeUs || (g.horizon > 0 && t > g.horizon)
}

// nextArrival is the client's next arrival (request or session start)
// after t and the samplers of the phase it falls in; ok is false when a
// windowed client's windows are over. A draw that falls past the end of its
// window is dropped and the process starts afresh at the next window.
func (g *clientGen) nextArrival(t int64) (int64, *samplers, bool) {
	cc := g.cc
	if !cc.windowed {
		return satAdd(t, g.iat(&cc.arr)), &cc.smp, true
	}
	for g.ph < len(cc.phases) {
		p := &cc.phases[g.ph]
		t = max(t, p.start)
		if at := satAdd(t, g.iat(&p.arr)); at < p.end {
			return at, p.smp, true
		}
		g.ph++
	}
	return 0, nil, false
}

// iat draws one inter-arrival time, stretched by the rate ramp if any.
func (g *clientGen) iat(a *arrivalSampler) int64 {
	x := a.next(g.rng)
	if r := g.cc.ramp; r != nil {
		x = r.stretch(x, g.drawn, g.cc.frac, g.cc.rampN)
		g.drawn++
	}
	return x
}

// newSession starts a session with its own stream, seeded by one draw of
// the client's stream.
func (g *clientGen) newSession(smp *samplers) *session {
	s := &session{cc: g.cc, smp: smp, seq: g.seq, cap: g.cc.maxRounds}
	seed := g.rng.Uint64()
	s.pcg.Seed(seed, seed^pcgIncrement)
	s.rng = rand.New(&s.pcg)
	g.seq++
	return s
}

// drawRound fills a draft's lengths, ratio and token seed from r, in this
// order: input length (multimodal: its text, then each modality's count and
// tokens), output length, reason ratio (if any), token seed.
func drawRound(smp *samplers, r *rand.Rand, d *draft) {
	if smp.mm != nil {
		d.in, d.mm = smp.mm.sample(r, smp.in)
	} else {
		d.in, d.mm = smp.in.sample(r), [3]int{}
	}
	d.out = smp.out.sample(r)
	d.rr = 0
	if smp.ratio != nil {
		d.rr = smp.ratio.sampleRatio(r)
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
		var smp *samplers
		var ok bool
		if g.t, smp, ok = g.nextArrival(g.t); !ok || g.beyond(g.t) {
			return
		}
		d.at = g.t
		drawRound(smp, g.rng, d)
	case genClosedSessions:
		if cc.single && g.seq > 0 {
			return
		}
		var smp *samplers
		var ok bool
		if g.t, smp, ok = g.nextArrival(g.t); !ok || g.beyond(g.t) {
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
		s := g.newSession(smp)
		d.sess = s
		drawRound(smp, s.rng, d)
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
		s := g.newSession(&cc.smp)
		s.id = "concurrency_" + cc.c.ID + "_user_" + strconv.Itoa(u)
		d.sess = s
		drawRound(s.smp, s.rng, d)
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
			drawRound(s.smp, s.rng, d)
			if cc.accumulate && s.draftLen+s.draftOut+d.in > MaxPromptTokens {
				s.closed, s.cut = true, SessionCancelled
				if g.onCut != nil {
					g.onCut(s)
				}
				continue
			}
		} else if g.startOK {
			s = g.newSession(g.startSmp)
			s.at = g.nextStart
			d.at, d.sess, d.round = s.at, s, 0
			drawRound(s.smp, s.rng, d)
			if cc.single {
				g.startOK = false
			} else {
				g.nextStart, g.startSmp, g.startOK = g.nextArrival(g.nextStart)
				g.startOK = g.startOK && !g.beyond(g.nextStart)
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
