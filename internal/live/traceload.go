package live

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
	"servesim/internal/tracev2/input"
	"servesim/internal/tracev2/playback"
)

// playOptions say which trace to play and how (observe --trace).
type playOptions struct {
	path      string // file or "-"
	from      string // foreign format ("" = TraceV2 in any form)
	lenient   bool
	atSend    bool          // inject at send_time_us instead of arrival_time_us
	offset    time.Duration // skip the trace's first offset of time
	rule      playback.Rule // think times, and the time scale of every recorded time
	closed    bool          // later session rounds follow completions
	hashBlock int           // prompt tokens per ext_hash_ids entry
	limit     int64         // rows to play at most; 0 = all
	horizonUs int64         // no row intended after it (played time); 0 = none
}

// playRow is one trace row as the player needs it: about 190 bytes plus its
// hash ids (strings are interned), so an hour of production traffic fits
// in memory whatever order the file lists its rows in.
type playRow struct {
	atUs        int64 // intended send time, µs from the first played row, scaled
	budgetUs    int64 // deadline − arrival in the trace (a client timeout), playback.NoDeadline = none
	sloTargetUs int64
	think       playback.Think // a session's think time before this round, played
	prompt      int32          // tokens (tracev2 ResendPromptTokens)
	prefixLen   int32
	out         int32
	round       int32
	streaming   bool
	reasonRatio float64
	clientID    string
	tenantID    string
	sloClass    string
	sessionID   string
	prefixGroup string
	model       string
	hashIDs     []int64
}

// playTrace is the window of a trace to play, ordered for playing.
type playTrace struct {
	name       string
	header     *tracev2.Header
	rows       []playRow // in send order (id = index)
	accumulate bool      // session_context_growth: accumulate
	sessions   bool
	classes    bool // some row has an SLO class
	sloTargets bool
	skipped    int // rows before --trace-offset or after the limits
}

// rawRow is a row with the times the plan is made from, as the trace
// writes them (normalise puts them on the trace's origin).
type rawRow struct {
	playRow
	injectUs, arrivalUs, lastChunkUs int64
	sendUs, deadlineUs               int64
	thinkUs                          int64 // think_time_us
	id                               int64 // request_id, for playback.Order
}

// loadPlay reads the trace to play through the trace input layer: a
// TraceV2 trace in any form (single stream, two files, gzip, stdin, a
// pipe) once, row by row, or, with from, a foreign trace through its
// importer. Reading stops once the window to play is passed (playWindow),
// so a window of a trace that never ends can be played; at most
// maxPlayRows rows are kept.
func loadPlay(o playOptions, stdin io.Reader, log *slog.Logger) (*playTrace, error) {
	p := &playTrace{}
	var raws []rawRow
	intern := map[string]string{}
	str := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		intern[s] = s
		return s
	}
	win := newPlayWindow(o)
	var tooMany error
	add := func(rec *tracev2.Record) (stop bool) {
		if win.past(rec.ArrivalTimeUs) {
			return true
		}
		if len(raws) >= maxPlayRows {
			tooMany = exitcode.Usagef("--trace %s: more than %d rows to play; play a window of it with --num-requests, --duration or --trace-offset",
				o.path, maxPlayRows)
			return true
		}
		r := rawRow{arrivalUs: rec.ArrivalTimeUs, lastChunkUs: rec.LastChunkTimeUs, sendUs: rec.SendTimeUs, deadlineUs: rec.DeadlineUs, id: rec.RequestID}
		r.sloTargetUs, r.thinkUs = rec.SLOTargetUs, rec.ThinkTimeUs
		r.prompt = int32(min(max(rec.ResendPromptTokens(), 0), math.MaxInt32))
		r.prefixLen = int32(min(max(rec.PrefixLength, 0), int(r.prompt)))
		r.out = int32(min(max(rec.OutputTokens, 0), math.MaxInt32))
		r.round = int32(min(max(rec.RoundIndex, 0), math.MaxInt32))
		r.streaming, r.reasonRatio = rec.Streaming, rec.ReasonRatio
		r.clientID, r.tenantID, r.sloClass = str(rec.ClientID), str(rec.TenantID), str(rec.SLOClass)
		r.sessionID, r.prefixGroup, r.model = str(rec.SessionID), str(rec.PrefixGroup), str(rec.Model)
		if len(rec.HashIDs) > 0 {
			r.hashIDs = slices.Clone(rec.HashIDs)
		}
		raws = append(raws, r)
		return false
	}
	origin, err := readPlay(o, stdin, p, add, log)
	if err == nil {
		err = tooMany
	}
	if err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, exitcode.Usagef("--trace %s: the trace has no requests", p.name)
	}
	normalise(raws, origin, o.atSend)
	p.order(raws, o)
	if len(p.rows) == 0 {
		return nil, exitcode.Usagef("--trace %s: no request is left after --trace-offset, --duration and --num-requests", p.name)
	}
	p.accumulate = p.header.SessionContextGrowth == tracev2.SessionAccumulate
	return p, nil
}

// normalise puts the rows' times on the trace's origin and derives their
// injection time and deadline budget (the playback's rules).
func normalise(raws []rawRow, o tracev2.Origin, atSend bool) {
	for i := range raws {
		r := &raws[i]
		rec := tracev2.Record{ArrivalTimeUs: r.arrivalUs, SendTimeUs: r.sendUs, LastChunkTimeUs: r.lastChunkUs, DeadlineUs: r.deadlineUs}
		o.Normalize(&rec)
		r.arrivalUs, r.lastChunkUs = rec.ArrivalTimeUs, rec.LastChunkTimeUs
		r.injectUs = playback.InjectionUs(&rec, atSend)
		r.budgetUs = playback.BudgetUs(&rec)
	}
}

// readPlay hands the rows of the trace to add, in file order, until add
// says stop, names the trace in p and returns the origin of the rows it
// handed. A TraceV2 trace is scanned once (input.Scan); a foreign one is
// imported (input.Open) onto its origin and its rows read once. Only
// --from imports: without it the trace is read as TraceV2.
func readPlay(o playOptions, stdin io.Reader, p *playTrace, add func(*tracev2.Record) bool, log *slog.Logger) (tracev2.Origin, error) {
	cfg := input.Config{Paths: []string{o.path}, Lenient: o.lenient, Stdin: stdin, Log: log}
	if o.from == "" {
		sc, err := input.Scan(cfg, add)
		if err != nil {
			return tracev2.Origin{}, err
		}
		if !sc.Complete {
			log.Info("read the trace as far as the window to play", "trace", sc.Name)
		}
		p.name, p.header = sc.Name, sc.Header
		return sc.Origin, nil
	}
	cfg.From = importer.Format(o.from)
	t, err := input.Open(cfg)
	if err != nil {
		return tracev2.Origin{}, err
	}
	defer t.Close()
	errStop := errors.New("window passed")
	err = input.Each(t.Rows, func(rec *tracev2.Record) error {
		if add(rec) {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return tracev2.Origin{}, err
	}
	p.name, p.header = t.Name, t.Header
	return tracev2.Origin{}, nil
}

// order sorts the rows in playback.Order (ties in file order), as replay
// does, drops those before --trace-offset,
// puts the first played row at 0, scales every time, applies --duration
// and --num-requests, and gives each session round the playback's think
// time, its previous round being the session's previous played row.
func (p *playTrace) order(raws []rawRow, o playOptions) {
	slices.SortStableFunc(raws, func(a, b rawRow) int { return playback.Order(a.injectUs, a.id, b.injectUs, b.id) })
	start := raws[0].injectUs + o.offset.Microseconds()
	want := int64(len(raws))
	if o.limit > 0 {
		want = min(want, o.limit)
	}
	p.rows = make([]playRow, 0, want) // sized once: a million rows are not copied as they grow
	first := -1
	lastChunk := map[string]int64{} // session → its previous round's last chunk
	for i := range raws {
		r := &raws[i]
		if r.injectUs < start {
			p.skipped++
			continue
		}
		if first < 0 {
			first = i
		}
		at := o.rule.Scale(r.injectUs - raws[first].injectUs)
		if (o.horizonUs > 0 && at > o.horizonUs) || (o.limit > 0 && int64(len(p.rows)) >= o.limit) {
			p.skipped++
			continue
		}
		row := r.playRow
		row.atUs = at
		if row.sessionID != "" {
			p.sessions = true
			row.think = o.rule.Think(playback.Round{ThinkTimeUs: r.thinkUs, ArrivalUs: r.arrivalUs,
				PrevLastChunkUs: lastChunk[row.sessionID]})
			lastChunk[row.sessionID] = r.lastChunkUs
		}
		p.classes = p.classes || row.sloClass != ""
		p.sloTargets = p.sloTargets || row.sloTargetUs > 0
		p.rows = append(p.rows, row)
	}
}

// traceName is the header's workload_spec of a played trace.
func traceName(p *playTrace) string {
	name := p.name
	if name != tracev2.StdinName {
		name = filepath.Base(name)
	}
	return "trace:" + strings.TrimSpace(name)
}

// describePlay is a one-line account of what will be played, for the log.
func describePlay(p *playTrace) string {
	last := p.rows[len(p.rows)-1].atUs
	return fmt.Sprintf("%s: %d requests over %v", p.name, len(p.rows), time.Duration(last)*time.Microsecond)
}
