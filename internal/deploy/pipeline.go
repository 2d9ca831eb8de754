package deploy

import (
	"servesim/internal/des/latency"
)

// resolvePipeline fills the instance's pipeline-parallel fields (docs/simulator.md
// §11): the latency model of one stage is the deployment's model with
// ⌈L/P⌉ layers (⌈L_MoE/P⌉ of them MoE), or, for the blackbox model, which
// knows no layers, its step time divided by P; activations cross between
// stages at H · activation bytes per token over the interconnect.
func (r *Resolved) resolvePipeline(kind latency.Kind) error {
	p := r.PipelineParallel
	if p <= 1 {
		return nil
	}
	in := &r.Instance
	in.PipelineStages = p
	mc := r.ModelConfig
	if mc == nil {
		return nil
	}
	in.StageSendUsPerToken = float64(mc.Hidden) * mc.DtypeBytes / (r.PPInterconnectBandwidth * 1e3)
	if kind == latency.KindBlackbox {
		return nil
	}
	stage := *mc
	stage.Layers = (mc.Layers + p - 1) / p
	stage.MoELayers = min(stage.Layers, (mc.MoELayers+p-1)/p)
	gpu, err := latency.ResolveGPU(r.GPU, r.HardwareFile)
	if err != nil {
		return invalid("%v", err)
	}
	var m latency.Model
	switch kind {
	case latency.KindRoofline:
		m, err = latency.NewRoofline(latency.RooflineConfig{Model: &stage, GPU: gpu, TP: r.TP})
	case latency.KindPhysics:
		m, err = latency.NewPhysics(latency.PhysicsConfig{Model: &stage, GPU: gpu, TP: r.TP, DP: r.DataParallel, Graphs: r.graphs, Alpha: r.AlphaCoeffs, Beta: r.BetaCoeffs})
	default:
		m, err = latency.NewTrainedPhysics(latency.TrainedPhysicsConfig{Model: &stage, GPU: gpu, TP: r.TP, Alpha: r.AlphaCoeffs, Beta: r.BetaCoeffs})
	}
	if err != nil {
		return invalid("pipeline stage latency model: %v", err)
	}
	in.StageLatency = m
	return nil
}
