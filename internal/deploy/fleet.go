package deploy

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/des/autoscale"
	"servesim/internal/des/cluster"
	"servesim/internal/flagspec"
	"servesim/internal/infile"
	"servesim/internal/strictyaml"
)

// fleetKeys are the keys of a fleet whose replicas come and go.
func fleetKeys() []key {
	return []key{{name: "fleet_file", category: flagspec.CatCluster, omitZero: true,
		usage: "node pools, replica lifecycle and autoscaler YAML (BLIS policy-bundle keys node_pools, instance_lifecycle, autoscaler; docs/fleet.md): the fleet then changes during the run and the summary reports it over time",
		field: func(c *Config) any { return &c.FleetFile }}}
}

// The fleet file's documents, in BLIS's policy-bundle keys. Delays are in
// seconds, autoscaler times in µs, as BLIS writes them.
type fleetDoc struct {
	NodePools  []poolDoc  `yaml:"node_pools"`
	Lifecycle  lifeDoc    `yaml:"instance_lifecycle"`
	Autoscaler *scalerDoc `yaml:"autoscaler"`
	// HWConfig are the engine limits of the replicas of each GPU type (a
	// key is a pool's gpu_type); a zero field keeps the deployment's.
	HWConfig map[string]hwDoc `yaml:"hw_config_by_gpu"`
	// ReportIntervalS is the width of the fleet report's buckets (60 s).
	ReportIntervalS float64 `yaml:"report_interval_s"`
}

type delayDoc struct {
	Mean   float64 `yaml:"mean"`
	Stddev float64 `yaml:"stddev"`
}

type poolDoc struct {
	Name         string   `yaml:"name"`
	GPUType      string   `yaml:"gpu_type"`
	GPUsPerNode  int      `yaml:"gpus_per_node"`
	GPUMemoryGiB float64  `yaml:"gpu_memory_gib"`  // accepted for BLIS files; the memory of gpu_type sizes the KV cache
	TP           int      `yaml:"tensor_parallel"` // 0 = the deployment's
	InitialNodes int      `yaml:"initial_nodes"`
	MinNodes     int      `yaml:"min_nodes"`
	MaxNodes     int      `yaml:"max_nodes"`
	CostPerHour  float64  `yaml:"cost_per_hour"`
	Provisioning delayDoc `yaml:"provisioning_delay"`
}

type lifeDoc struct {
	LoadingDelay     delayDoc `yaml:"loading_delay"`
	WarmUpRequests   int      `yaml:"warm_up_request_count"`
	WarmUpTTFTFactor float64  `yaml:"warm_up_ttft_factor"`
	DrainPolicy      string   `yaml:"drain_policy"` // WAIT, REDIRECT, IMMEDIATE
	WarmStartInitial bool     `yaml:"warm_start_initial_instances"`
}

type scalerDoc struct {
	IntervalUs       int64       `yaml:"interval_us"`
	UpWindowUs       int64       `yaml:"scale_up_stabilization_window_us"`
	DownWindowUs     int64       `yaml:"scale_down_stabilization_window_us"`
	HPAScrapeDelay   delayDoc    `yaml:"hpa_scrape_delay"` // seconds: the actuation delay
	ScrapeIntervalUs int64       `yaml:"metrics_scrape_interval_us"`
	MinReplicas      int         `yaml:"min_replicas"`
	MaxReplicas      int         `yaml:"max_replicas"`
	Analyzer         analyzerDoc `yaml:"analyzer"`
}

type hwDoc struct {
	MaxNumSeqs          int `yaml:"max_num_seqs"`
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens"`
	TotalKVBlocks       int `yaml:"total_kv_blocks"`
}

type analyzerDoc struct {
	KVCacheThreshold  float64 `yaml:"kv_cache_threshold"`
	ScaleUpThreshold  float64 `yaml:"scale_up_threshold"`
	ScaleDownBoundary float64 `yaml:"scale_down_boundary"`
	AvgInputTokens    float64 `yaml:"avg_input_tokens"`
}

// ReadFleet reads a fleet file for the resolved deployment r: a pool's
// replicas run r's deployment on the pool's own GPU type and tensor
// parallelism (r's when not given), with its GPU's hw_config_by_gpu
// limits. Errors name file:line:column.
func (r *Resolved) ReadFleet(path string) (*cluster.Fleet, error) {
	return r.readFleet(path, nil)
}

// readFleet is ReadFleet with settings applied over the file's keys
// (fleetset.go).
func (r *Resolved) readFleet(path string, set []FleetSetting) (*cluster.Fleet, error) {
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return nil, invalid("fleet: %v", err)
	}
	root, err := strictyaml.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, invalid("%s: empty fleet file (want node_pools, instance_lifecycle, autoscaler)", path)
	}
	for _, x := range set {
		if err := x.apply(root); err != nil {
			return nil, invalid("%s: %v", path, err)
		}
	}
	if err := checkKeys(path, root, "", reflect.TypeOf(fleetDoc{})); err != nil {
		return nil, err
	}
	var doc fleetDoc
	if err := strictyaml.Decode(path, root, "", &doc); err != nil {
		return nil, err
	}
	f, err := doc.fleet(path)
	if err != nil {
		return nil, err
	}
	if err := doc.hardware(path, root, r, f); err != nil {
		return nil, err
	}
	return f, nil
}

// checkKeys refuses, at its position, a key that t (a struct with yaml
// tags, or a list or pointer of one) does not know, or a key given twice.
func checkKeys(file string, n *yaml.Node, path string, t reflect.Type) error {
	if t.Kind() == reflect.Map && n.Kind == yaml.MappingNode {
		seen := strictyaml.Keys{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if err := seen.Add(file, k, path); err != nil {
				return err
			}
			if err := checkKeys(file, n.Content[i+1], path+"."+k.Value, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				if err := checkKeys(file, c, fmt.Sprintf("%s[%d]", path, i), t); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil // a type mismatch is Decode's to report
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		fields[name] = t.Field(i).Type
	}
	seen := strictyaml.Keys{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ft, ok := fields[k.Value]
		if !ok {
			return strictyaml.UnknownKey(file, k, path, slices.Sorted(func(yield func(string) bool) {
				for name := range fields {
					if !yield(name) {
						return
					}
				}
			}))
		}
		if err := seen.Add(file, k, path); err != nil {
			return err
		}
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		if err := checkKeys(file, n.Content[i+1], sub, ft); err != nil {
			return err
		}
	}
	return nil
}

// micros converts a delay in seconds to µs, bounded (a year).
func (d delayDoc) micros(file, what string) (cluster.Delay, error) {
	const year = 365 * 24 * 3600.0
	if !(d.Mean >= 0 && d.Mean <= year) || !(d.Stddev >= 0 && d.Stddev <= year) {
		return cluster.Delay{}, invalid("%s: %s: mean %v s and stddev %v s must be in [0, %v]", file, what, d.Mean, d.Stddev, year)
	}
	return cluster.Delay{MeanUs: int64(math.Round(d.Mean * 1e6)), StddevUs: int64(math.Round(d.Stddev * 1e6))}, nil
}

func (doc *fleetDoc) fleet(file string) (*cluster.Fleet, error) {
	f := &cluster.Fleet{}
	if !(doc.ReportIntervalS >= 0 && doc.ReportIntervalS <= 86400) {
		return nil, invalid("%s: report_interval_s %v must be in [0, 86400]", file, doc.ReportIntervalS)
	}
	f.ReportUs = int64(math.Round(doc.ReportIntervalS * 1e6))
	for i, p := range doc.NodePools {
		prov, err := p.Provisioning.micros(file, fmt.Sprintf("node_pools[%d].provisioning_delay", i))
		if err != nil {
			return nil, err
		}
		f.Pools = append(f.Pools, cluster.NodePool{Name: p.Name, GPU: p.GPUType, GPUsPerNode: p.GPUsPerNode, TP: p.TP,
			InitialNodes: p.InitialNodes, MinNodes: p.MinNodes, MaxNodes: p.MaxNodes, CostPerHour: p.CostPerHour, Provision: prov})
	}
	l := doc.Lifecycle
	load, err := l.LoadingDelay.micros(file, "instance_lifecycle.loading_delay")
	if err != nil {
		return nil, err
	}
	f.Lifecycle = cluster.Lifecycle{Loading: load, WarmUpRequests: l.WarmUpRequests, WarmUpFactor: l.WarmUpTTFTFactor,
		Drain: cluster.DrainPolicy(strings.ToLower(l.DrainPolicy)), ColdStart: !l.WarmStartInitial && load.MeanUs+load.StddevUs > 0}
	if l.WarmUpRequests > 0 && l.WarmUpTTFTFactor == 0 {
		f.Lifecycle.WarmUpFactor = 1
	}
	if a := doc.Autoscaler; a != nil {
		s := cluster.DefaultAutoscaler()
		if a.IntervalUs != 0 {
			s.IntervalUs = a.IntervalUs
		}
		s.UpWindowUs, s.DownWindowUs, s.ScrapeIntervalUs = a.UpWindowUs, a.DownWindowUs, a.ScrapeIntervalUs
		d, err := a.HPAScrapeDelay.micros(file, "autoscaler.hpa_scrape_delay")
		if err != nil {
			return nil, err
		}
		if d.StddevUs != 0 {
			return nil, invalid("%s: autoscaler.hpa_scrape_delay: a random actuation delay is not supported; give stddev 0", file)
		}
		s.ActuationDelayUs = d.MeanUs
		if a.MinReplicas != 0 {
			s.MinReplicas = a.MinReplicas
		}
		s.MaxReplicas = a.MaxReplicas
		z := a.Analyzer
		def := autoscale.DefaultAnalyzer()
		s.Analyzer = autoscale.Analyzer{KVCacheThreshold: or(z.KVCacheThreshold, def.KVCacheThreshold), ScaleUpThreshold: or(z.ScaleUpThreshold, def.ScaleUpThreshold),
			ScaleDownBoundary: or(z.ScaleDownBoundary, def.ScaleDownBoundary), AvgInputTokens: or(z.AvgInputTokens, def.AvgInputTokens)}
		f.Autoscaler = &s
	}
	return f, nil
}

// or is v, or def when v is 0 (not given).
func or(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
