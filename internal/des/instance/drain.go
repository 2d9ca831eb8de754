package instance

import (
	"sort"

	"servesim/internal/des"
)

// Withdraw takes back every request that has not yet been scheduled at
// this instance (pending ones, by id, then queued ones never given a
// token, in scheduler order) and hands each to fn as a new request that
// may be submitted anywhere, its own fields intact. Requests already
// scheduled once (running, or preempted back to the queue) stay. A
// withdrawn request counts as never submitted here. With asynchronous
// scheduling nothing is withdrawn: its staged requests belong to the next
// step already.
func (in *Instance) Withdraw(fn func(r *Request)) {
	if in.async.on {
		return
	}
	out := make([]*Request, 0, len(in.pending)+in.wait.Len())
	for r := range in.pending {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	for _, r := range out {
		in.eng.Cancel(r.queuedH)
		r.queuedH = des.Handle{}
		delete(in.pending, r)
	}
	q := append([]*Request(nil), in.wait.items()...)
	sort.Slice(q, func(i, j int) bool { return in.wait.less(q[i], q[j]) })
	for _, r := range q {
		if !r.hasFirstSched {
			in.wait.remove(r)
			out = append(out, r)
		}
	}
	for _, r := range out {
		in.kv.Release(&r.seq)
		in.kv.Recycle(&r.seq)
		if r.timeoutH.Valid() {
			in.eng.Cancel(r.timeoutH)
			r.timeoutH = des.Handle{}
		}
		r.inst = nil
		r.status = StatusNew // back to before Submit; no terminal state is recorded
		in.cnt.Submitted--
	}
	for _, r := range out {
		fn(r)
	}
}

// Cut stops every live request at this instance at once — pending (by
// id), queued (in scheduler order, staged ones last) and running — frees
// their KV blocks, and hands each to fn as a new request that may be
// submitted anywhere: its own fields intact, the work done here lost. A
// cut request counts as never submitted here. A request whose result was
// handed out already (its last step under way) is no longer live and
// finishes.
func (in *Instance) Cut(fn func(r *Request)) {
	out := make([]*Request, 0, len(in.pending)+in.wait.Len()+len(in.running))
	for r := range in.pending {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	q := append([]*Request(nil), in.wait.items()...)
	sort.Slice(q, func(i, j int) bool { return in.wait.less(q[i], q[j]) })
	out = append(append(append(out, q...), in.async.pending()...), in.running...)
	for _, r := range out {
		in.cancel(r)
		in.kv.Recycle(&r.seq)
		if r.timeoutH.Valid() {
			in.eng.Cancel(r.timeoutH)
		}
		r.restart()
		in.cnt.Submitted--
	}
	for _, r := range out {
		fn(r)
	}
}

// restart clears the simulator's state of r, as before its first Submit:
// the caller's fields stay.
func (r *Request) restart() {
	keep := Request{ID: r.ID, ArrivalUs: r.ArrivalUs, Prompt: r.Prompt, Output: r.Output, KnownHashes: r.KnownHashes,
		OutputLen: r.OutputLen, MaxOutputLen: r.MaxOutputLen, SLOClass: r.SLOClass, Tenant: r.Tenant,
		DeadlineUs: r.DeadlineUs, SLOTargetUs: r.SLOTargetUs, SessionID: r.SessionID, Round: r.Round, Tag: r.Tag,
		Private: r.Private, PrivateFrom: r.PrivateFrom, PrefillOnly: r.PrefillOnly, MediaTokens: r.MediaTokens}
	r.Reset()
	keep.lgen = r.lgen
	*r = keep
}
