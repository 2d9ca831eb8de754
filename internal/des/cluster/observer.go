package cluster

import "servesim/internal/des/instance"

// Observer watches the cluster's own events (a timeline's router and
// transfer tracks, and each instance's requests, P/D parts included). Its
// methods run inside the simulation and must not change it; requests and
// results are valid only during the call.
type Observer interface {
	// Routed: r goes to instance inst of pool ("all", "prefill" or
	// "decode") at now. A P/D prefill part has r.PrefillOnly; a decode
	// part is routed when its prefill ends, before its KV transfer.
	Routed(now int64, r *instance.Request, inst int, pool string)
	// Refused: r leaves the cluster at now without reaching an instance
	// (again): "rejected" by admission (or a full gateway queue), "shed"
	// or "expired" from the gateway queue, or "dropped" when its decode
	// instance had no room for its KV.
	Refused(now int64, r *instance.Request, reason string)
	// Transfer: r's KV moves from instance from to instance to over
	// [start, end). It is called at start; the transfer always runs to its
	// end, even if the decode part times out meanwhile.
	Transfer(start, end int64, r *instance.Request, from, to int)
	// InstanceDone: instance inst is done with r, which it was given
	// (Submit, or a P/D decode reservation): r is terminal there (a
	// prefill part is StatusPrefilled at the end of its prefill), or live
	// at the end of the run (res.DoneUs < 0). Called once per request and
	// instance, before the result reaches the sink.
	InstanceDone(inst int, res *instance.Result, r *instance.Request)
}

// Pools names each instance's P/D pool ("prefill" or "decode"), or ""
// for every instance without P/D.
func (c *Cluster) Pools() []string {
	out := make([]string, len(c.insts))
	if c.pd == nil {
		return out
	}
	for i := range out {
		out[i] = poolNames[poolDecode]
		if i < c.cfg.PD.PrefillInstances {
			out[i] = poolNames[poolPrefill]
		}
	}
	return out
}
