package workload

import (
	"fmt"
	"math"
)

// An inference_perf block (BLIS's inference-perf compatibility, docs/workload.md
// §3) expands into N × M clients per stage: system prompt p (group
// "prompt-p", system_prompt_len tokens, also the tenant) times user u, with
// constant question_len input and output_len output, SLO class standard.
// Stages run one after another, each for its duration (seconds); stage s's
// clients "stage-s-prompt-p-user-u" (one stage: "prompt-p-user-u") send
// only during it, at the stage rate shared evenly (absolute rates: the
// spec's aggregate_rate is replaced). With enable_multi_turn_chat each
// client is one closed-loop session whose rounds (the stage's rate ×
// duration requests shared evenly) come N·M/rate seconds apart, without
// context growth, as inference-perf's multi-turn chat sends them.
//
// Deviation: BLIS sends a one-stage run's requests at exactly rate ×
// duration per client set (its normalised exponential sampler); here they
// follow a Poisson process over the stage, so the count varies around it.

type rawInferencePerf struct {
	Stages       []rawStage       `yaml:"stages"`
	SharedPrefix *rawSharedPrefix `yaml:"shared_prefix"`
}

type rawStage struct {
	Rate     *float64 `yaml:"rate"`
	Duration *int64   `yaml:"duration"`
}

type rawSharedPrefix struct {
	NumUniqueSystemPrompts  *int64 `yaml:"num_unique_system_prompts"`
	NumUsersPerSystemPrompt *int64 `yaml:"num_users_per_system_prompt"`
	SystemPromptLen         *int64 `yaml:"system_prompt_len"`
	QuestionLen             *int64 `yaml:"question_len"`
	OutputLen               *int64 `yaml:"output_len"`
	EnableMultiTurnChat     bool   `yaml:"enable_multi_turn_chat"`
}

// maxStageSeconds bounds one stage (a year).
const maxStageSeconds = 365 * 24 * 3600

// expandInferencePerf fills s.Clients from an inference_perf block.
func expandInferencePerf(ip *rawInferencePerf, s *Spec, pos *positions) ([]string, *Error) {
	const path = "inference_perf"
	var warn []string
	if len(ip.Stages) == 0 {
		return nil, &Error{Path: path + ".stages", Msg: "at least one stage is required"}
	}
	sp := ip.SharedPrefix
	if sp == nil {
		return nil, &Error{Path: path, Msg: "shared_prefix is required"}
	}
	n, m := deref(sp.NumUniqueSystemPrompts), deref(sp.NumUsersPerSystemPrompt)
	if n < 1 || m < 1 || n*m > MaxClients/int64(len(ip.Stages)) {
		return nil, &Error{Path: path + ".shared_prefix", Msg: fmt.Sprintf("num_unique_system_prompts %d × num_users_per_system_prompt %d: want both >= 1 and at most %d clients in all", n, m, MaxClients)}
	}
	lengths := [3]int64{deref(sp.SystemPromptLen), deref(sp.QuestionLen), deref(sp.OutputLen)}
	for i, name := range []string{"system_prompt_len", "question_len", "output_len"} {
		if lengths[i] < 0 || lengths[i] > MaxSampleTokens {
			return nil, &Error{Path: path + ".shared_prefix." + name, Msg: fmt.Sprintf("%d out of range [0, %d]", lengths[i], MaxSampleTokens)}
		}
	}
	if s.AggregateRate > 0 {
		warn = append(warn, pos.where("aggregate_rate")+"ignored: the inference_perf stages set the rates")
	}
	s.AggregateRate = 0 // absolute rates: every stage window carries its own
	if s.Category == "" {
		s.Category = "language"
		if sp.EnableMultiTurnChat {
			s.Category = "reasoning"
		}
	}
	clients := int(n * m)
	var startUs int64
	for k, st := range ip.Stages {
		stp := fmt.Sprintf("%s.stages[%d]", path, k)
		if st.Rate == nil || st.Duration == nil {
			return nil, &Error{Path: stp, Msg: "rate and duration are required"}
		}
		rate, dur := *st.Rate, *st.Duration
		if !(rate > 0) || math.IsInf(rate, 0) {
			return nil, &Error{Path: stp + ".rate", Msg: fmt.Sprintf("%g must be finite and > 0", rate)}
		}
		if dur < 1 || dur > maxStageSeconds {
			return nil, &Error{Path: stp + ".duration", Msg: fmt.Sprintf("%d s out of range [1, %d]", dur, maxStageSeconds)}
		}
		per := rate / float64(clients)
		lc := &Lifecycle{Windows: []Window{{StartUs: startUs, EndUs: startUs + dur*1_000_000, TraceRate: &per}}}
		startUs += dur * 1_000_000
		var rounds []int
		if sp.EnableMultiTurnChat {
			total := int64(rate * float64(dur))
			if total < int64(clients) || total > maxRounds {
				return nil, &Error{Path: stp, Msg: fmt.Sprintf("rate %g × duration %d s gives %d requests for %d sessions: want at least one each", rate, dur, total, clients)}
			}
			rounds = make([]int, clients)
			for i := range rounds {
				rounds[i] = int(total / int64(clients))
				if int64(i) < total%int64(clients) {
					rounds[i]++
				}
			}
		}
		first := len(s.Clients)
		for p := range n {
			group := fmt.Sprintf("prompt-%d", p)
			for u := range m {
				id := fmt.Sprintf("prompt-%d-user-%d", p, u)
				if len(ip.Stages) > 1 {
					id = fmt.Sprintf("stage-%d-%s", k, id)
				}
				c := Client{ID: id, TenantID: group, SLOClass: "standard", RateFraction: 1,
					Arrival:     Arrival{Process: ProcessPoisson},
					Input:       Distribution{Type: DistConstant, Params: map[string]float64{"value": float64(lengths[1])}},
					Output:      Distribution{Type: DistConstant, Params: map[string]float64{"value": float64(lengths[2])}},
					PrefixGroup: group, PrefixLength: int(lengths[0]), Lifecycle: lc, src: stp, lead: first + 1}
				if rounds != nil {
					i := len(s.Clients) - first
					c.MultiTurn = &MultiTurn{MaxRounds: rounds[i], ThinkTimeUs: int64(float64(clients) / rate * 1e6), SingleSession: true}
					c.ClosedLoop, c.TimeoutUs = true, DefaultTimeoutUs
				}
				s.Clients = append(s.Clients, c)
			}
		}
	}
	return warn, nil
}
