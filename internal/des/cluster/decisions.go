package cluster

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"servesim/internal/des/instance"
)

// decisionLog writes one JSON line per routing decision (--trace-level
// decisions): the request, the pool, the policy, the chosen instance, the
// number of candidates tied for best, and per candidate its signals as the
// router saw them (queue depth, batch size and KV utilisation from the
// snapshot, in-flight live) and, for weighted, its total and per-scorer
// scores; with --counterfactual-k, the regret and the top candidates
// (appendCounterfactual). P/D decider outcomes get a line of their own. Keys are fixed and
// ordered, numbers formatted shortest-exact, so the file is deterministic.
type decisionLog struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func newDecisionLog(w io.Writer) *decisionLog {
	if w == nil {
		return nil
	}
	return &decisionLog{w: bufio.NewWriterSize(w, 64<<10)}
}

func (d *decisionLog) decision(rt *router, now int64, r *instance.Request, pool []int, poolID, chosen int) {
	b := d.buf[:0]
	b = append(b, `{"t_us":`...)
	b = strconv.AppendInt(b, now, 10)
	b = append(b, `,"request_id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"pool":"`...)
	b = append(b, poolNames[poolID]...)
	b = append(b, `","policy":"`...)
	b = append(b, rt.policy...)
	b = append(b, `","chosen":`...)
	b = strconv.AppendInt(b, int64(chosen), 10)
	b = append(b, `,"tied":`...)
	b = strconv.AppendInt(b, int64(len(rt.ties)), 10)
	b = append(b, `,"snapshot_age_us":`...)
	b = strconv.AppendInt(b, rt.snapshotAge(now), 10)
	b = append(b, `,"candidates":[`...)
	for k, i := range pool {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"instance":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = appendSignals(b, rt, i)
		if rt.policy == Weighted {
			b = append(b, `,"score":`...)
			b = appendFloat(b, rt.total[k])
			b = append(b, `,"scores":{`...)
			for j, sc := range rt.scorers {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, sc.Name)
				b = append(b, ':')
				b = appendFloat(b, rt.parts[j][k])
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if rt.cf != nil {
		b = appendCounterfactual(b, rt, pool)
	}
	b = append(b, "}\n"...)
	d.write(b)
}

// appendCounterfactual adds the decision's regret and its top candidates,
// best first, with their scores and signals (--counterfactual-k).
func appendCounterfactual(b []byte, rt *router, pool []int) []byte {
	cf := rt.cf
	b = append(b, `,"regret":`...)
	b = appendFloat(b, cf.regret)
	b = append(b, `,"counterfactual":[`...)
	for j, k := range cf.top {
		if j > 0 {
			b = append(b, ',')
		}
		i := pool[k]
		b = append(b, `{"instance":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"score":`...)
		b = appendFloat(b, cf.score[k])
		b = appendSignals(b, rt, i)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendSignals adds what the router read of instance i: its queue
// depth, batch size and KV utilisation from the snapshot, and its requests
// in flight.
func appendSignals(b []byte, rt *router, i int) []byte {
	s := rt.snap[i]
	b = append(b, `,"queue_depth":`...)
	b = strconv.AppendInt(b, int64(s.queue), 10)
	b = append(b, `,"batch_size":`...)
	b = strconv.AppendInt(b, int64(s.batch), 10)
	b = append(b, `,"in_flight":`...)
	b = strconv.AppendInt(b, int64(rt.load[i]), 10)
	b = append(b, `,"kv_utilization":`...)
	return appendFloat(b, s.kvUtil)
}

// pd records a P/D decider outcome: the decode instance consulted, the
// prompt tokens it has cached, and whether the request disaggregates.
func (d *decisionLog) pd(now int64, r *instance.Request, decider Decider, decode, cached int, disaggregate bool) {
	b := d.buf[:0]
	b = append(b, `{"t_us":`...)
	b = strconv.AppendInt(b, now, 10)
	b = append(b, `,"request_id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"pd_decider":"`...)
	b = append(b, decider...)
	b = append(b, `","decode_instance":`...)
	b = strconv.AppendInt(b, int64(decode), 10)
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(len(r.Prompt)), 10)
	b = append(b, `,"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	b = append(b, `,"disaggregate":`...)
	b = strconv.AppendBool(b, disaggregate)
	b = append(b, "}\n"...)
	d.write(b)
}

func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }

func (d *decisionLog) write(b []byte) {
	d.buf = b[:0]
	if d.err != nil {
		return
	}
	if _, err := d.w.Write(b); err != nil {
		d.err = err
	}
}

func (d *decisionLog) flush() error {
	if d.err == nil {
		d.err = d.w.Flush()
	}
	if d.err != nil {
		return fmt.Errorf("cluster: routing decisions: %w", d.err)
	}
	return nil
}
