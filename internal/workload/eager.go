package workload

import (
	"sort"
	"strconv"
)

// Eager generates every pre-generated request at once, the way docs/workload.md
// §9 describes it: each client's requests in full (up to num_requests
// slots), then a stable sort by arrival time (ties: client spec order, then
// generation order), truncation to num_requests, and numbering. It gives
// exactly what a Source's Next returns, with memory linear in the request
// count; it exists to check the lazy path and for small tools. Follow-ups
// are not included.
func (w *Workload) Eager() []*Request {
	src := w.newSource(false)
	type item struct {
		r    *Request
		at   int64
		cost int64
		sess *session
	}
	var items []item
	limit := w.Spec.NumRequests
	for _, g := range src.gens {
		slots := int64(0)
		for g.ok && (limit == 0 || slots < limit) {
			d := g.pending
			r := src.build(g.cc, &d, -1, d.sess != nil && d.round > 0, 0)
			items = append(items, item{r: r, at: d.at, cost: d.cost, sess: d.sess})
			slots += d.cost
			g.advance()
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].at < items[j].at })
	out := make([]*Request, 0, len(items))
	used := int64(0)
	for _, it := range items {
		if limit > 0 && used >= limit {
			break
		}
		used += it.cost
		r := it.r
		r.ID = int64(len(out))
		if sess := it.sess; sess != nil {
			if sess.id == "" && r.RoundIndex == 0 {
				sess.id = "sess_" + strconv.FormatInt(r.ID, 10)
			}
			r.SessionID = sess.id
		}
		out = append(out, r)
	}
	return out
}
