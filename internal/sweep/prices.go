package sweep

import (
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/infile"
	"servesim/internal/strictyaml"
)

// Price is the hourly price of one GPU.
type Price struct {
	GPU        string  `json:"gpu"`
	USDPerHour float64 `json:"usd_per_gpu_hour"`
	Source     string  `json:"source"`
}

// Built-in list prices per GPU-hour of the GPUs the simulator knows
// (internal/des/latency's hardware_config.json): on-demand, one GPU, no
// commitment. They come from one public price list so that they compare
// with each other: Modal's (modal.com/pricing), which bills per GPU-second;
// the per-second rates were $0.001097 (H100), $0.000694 (A100 80 GB) and
// $0.000542 (L40S) when checked on 2026-05-07 (as reported by techbytes.app's
// "Serverless GPU Pricing Matrix", verified that day against the vendors'
// pages), i.e. $3.9492, $2.4984 and $1.9512 an hour, rounded to the cent.
// GPU-hour prices differ two- to three-fold between providers and terms
// (spot, reserved): give yours with --prices.
const modalSource = "Modal on-demand list price per GPU-second × 3600, checked 2026-05-07"

// DefaultPrices is the built-in price table.
func DefaultPrices() Prices {
	return Prices{list: []Price{
		{GPU: "A100-80", USDPerHour: 2.50, Source: modalSource + " (A100 80 GB: $0.000694/s)"},
		{GPU: "A100-SXM", USDPerHour: 2.50, Source: modalSource + " (A100 80 GB: $0.000694/s)"},
		{GPU: "H100", USDPerHour: 3.95, Source: modalSource + " (H100: $0.001097/s)"},
		{GPU: "L40S", USDPerHour: 1.95, Source: modalSource + " (L40S: $0.000542/s)"},
	}}
}

// Prices is a price table; GPU names match without regard to case.
type Prices struct{ list []Price }

// Lookup returns the price of a GPU.
func (p Prices) Lookup(gpu string) (Price, bool) {
	for _, x := range p.list {
		if strings.EqualFold(x.GPU, gpu) {
			return x, true
		}
	}
	return Price{}, false
}

// List returns the table sorted by GPU name.
func (p Prices) List() []Price { return append([]Price(nil), p.list...) }

// Used returns the prices of the GPUs the rows ran on, sorted by name; a
// fleet's row is priced by its fleet file, not by these.
func (p Prices) Used(rows []Row) []Price {
	var out []Price
	for _, x := range p.list {
	rows:
		for i := range rows {
			if rows[i].Fleet != nil {
				continue
			}
			if strings.EqualFold(rows[i].GPU, x.GPU) {
				out = append(out, x)
				break
			}
			for _, g := range rows[i].GPUMix {
				if strings.EqualFold(g.GPU, x.GPU) {
					out = append(out, x)
					break rows
				}
			}
		}
	}
	return out
}

// set replaces or adds a price, keeping the list sorted.
func (p Prices) set(x Price) Prices {
	out := make([]Price, 0, len(p.list)+1)
	for _, y := range p.list {
		if !strings.EqualFold(y.GPU, x.GPU) {
			out = append(out, y)
		}
	}
	out = append(out, x)
	sort.Slice(out, func(i, j int) bool { return out[i].GPU < out[j].GPU })
	return Prices{list: out}
}

// LoadPrices reads a price file over base: a YAML map from GPU name to USD
// per GPU-hour, e.g.
//
//	H100: 2.49      # our reserved rate
//	A100-80: 1.29
//
// Entries replace base's for the same GPU (any case) or add GPUs.
func LoadPrices(path string, base Prices) (Prices, error) {
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return base, inputErr(Pos{File: path}, "prices", "%v", err)
	}
	return DecodePrices(path, data, base)
}

// DecodePrices is LoadPrices on bytes already read.
func DecodePrices(name string, data []byte, base Prices) (Prices, error) {
	doc, err := strictyaml.Parse(name, data)
	if err != nil {
		return base, fromYAML(err)
	}
	if doc == nil {
		return base, inputErr(Pos{File: name}, "prices", "the file is empty")
	}
	return pricesFrom(doc, name, "prices", base)
}

// pricesFrom reads a GPU → price mapping node.
func pricesFrom(m *yaml.Node, file, field string, base Prices) (Prices, error) {
	if err := strictyaml.WantMapping(file, m, field, "GPU names to USD per GPU-hour (e.g. H100: 2.49)"); err != nil {
		return base, fromYAML(err)
	}
	out := base
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		kpos := Pos{File: file, Line: k.Line, Col: k.Column}
		vpos := Pos{File: file, Line: v.Line, Col: v.Column}
		name := strings.TrimSpace(k.Value)
		if k.Kind != yaml.ScalarNode || name == "" {
			return base, inputErr(kpos, field, "a GPU name must be a plain word such as H100")
		}
		if seen[strings.ToLower(name)] {
			return base, inputErr(kpos, field, "GPU %s is priced twice", name)
		}
		seen[strings.ToLower(name)] = true
		usd, err := strconv.ParseFloat(strings.TrimSpace(v.Value), 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			return base, inputErr(vpos, field+"."+name, "%q is not a number of USD per GPU-hour", v.Value)
		}
		if err := checkPrice(usd); err != nil {
			return base, inputErr(vpos, field+"."+name, "%v", err)
		}
		out = out.set(Price{GPU: name, USDPerHour: usd, Source: file})
	}
	return out, nil
}
