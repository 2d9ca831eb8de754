package report

import "servesim/internal/tracev2"

// CompareDeployments is the config verdict between two runs' deployments,
// as their headers state them: a's keys stand where a grade has the
// trace's (ConfigKey.Trace, Source) and b's where it has the simulation's
// (ConfigKey.Sim). A header without a deployment compares as stating no
// key. sameModel compares model names (nil: case-insensitive).
func CompareDeployments(a, b *tracev2.Header, sameModel func(x, y string) bool) ConfigMatch {
	hb := HeaderFrom(b)
	other := hb.Deployment
	if other == nil {
		other = map[string]any{}
	}
	cm, _ := configMatch(HeaderFrom(a), other, sameModel)
	return cm
}
