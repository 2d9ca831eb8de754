package replay

import (
	"fmt"

	"servesim/internal/des/instance"
	"servesim/internal/tracev2"
)

// simulatedRecord writes into out the trace row of a simulated request
// (docs/tracev2.md §4.2): send = the time the request reached the server (its
// arrival, unless a capped client held it), chunk times = send + TTFT and
// send + E2E.
func (d *driver) simulatedRecord(out, in *tracev2.Record, res *instance.Result) {
	*out = *in
	out.SendTimeUs = res.ArrivalUs
	out.FirstChunkTimeUs, out.LastChunkTimeUs = 0, 0
	if res.TTFTUs >= 0 {
		out.FirstChunkTimeUs = res.ArrivalUs + res.TTFTUs
	}
	if res.Status == instance.StatusCompleted {
		out.LastChunkTimeUs = res.ArrivalUs + res.E2EUs
	}
	out.NumChunks = 0
	out.FinishReason = ""
	out.FirstTokenTimeUs = 0
	out.CachedTokens = 0
	out.Instance = d.instanceName(res.Instance)
	out.Preemptions = res.Preemptions
	out.Status, out.ErrorMessage = statusOf(res)
}

func statusOf(res *instance.Result) (status, reason string) {
	switch res.Status {
	case instance.StatusCompleted:
		return "ok", ""
	case instance.StatusTimedOut:
		return "timeout", ""
	case instance.StatusDropped:
		if res.NoDecodeKV {
			return "incomplete", "dropped: no free KV blocks on the decode instance"
		}
		return "incomplete", "dropped: unservable"
	case instance.StatusRejected:
		refused := tracev2.OutcomePrefix(tracev2.OutcomeRefused)
		if res.EncodeRejected {
			return "incomplete", refused + "no encode instance takes its media"
		}
		if res.Refusal != "" {
			return "incomplete", refused + res.Refusal
		}
		return "incomplete", refused + "admission"
	case instance.StatusShed:
		return "incomplete", tracev2.OutcomePrefix(tracev2.OutcomeShed) + "gateway queue full"
	case instance.StatusExpired:
		return "incomplete", tracev2.OutcomePrefix(tracev2.OutcomeExpired) + "gateway queue TTL"
	case instance.StatusEvicted:
		return "incomplete", tracev2.OutcomePrefix(tracev2.OutcomeEvicted) + "gateway"
	default:
		if res.InGateway {
			return "incomplete", "horizon: in the gateway queue"
		}
		return "incomplete", "horizon"
	}
}

// instanceName is the ext_instance of a request: "" for one that never
// reached an instance (still held by the cluster, rejected); the names are
// made once per instance.
func (d *driver) instanceName(i int) string {
	switch {
	case i < 0:
		return ""
	case i >= 1<<16:
		return fmt.Sprintf("instance_%d", i)
	}
	for len(d.names) <= i {
		d.names = append(d.names, fmt.Sprintf("instance_%d", len(d.names)))
	}
	return d.names[i]
}

// simResult writes into out the SimResult of a completed request
// (docs/tracev2.md §9).
func (d *driver) simResult(out *tracev2.SimResult, rec *tracev2.Record, res *instance.Result) {
	*out = tracev2.SimResult{
		RequestID:         rec.RequestID,
		TTFTUs:            float64(res.TTFTUs),
		E2EUs:             float64(res.E2EUs),
		InputTokens:       res.PromptTokens,
		OutputTokens:      res.OutputTokens,
		SLOClass:          rec.SLOClass,
		Model:             rec.Model,
		ArrivalUs:         res.ArrivalUs,
		SchedulingDelayUs: float64(res.SchedulingDelayUs),
		NumPreemptions:    res.Preemptions,
		CachedInputTokens: res.CachedPromptTokens,
		Instance:          d.instanceName(res.Instance),
		WaitInFlightUs:    float64(res.InFlightWaitUs),
		StepInFlightUs:    float64(res.InFlightStepUs),
	}
	if res.OutputTokens >= 2 {
		out.ITLMeanUs = res.TPOTUs()
	}
}
