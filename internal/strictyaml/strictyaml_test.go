package strictyaml

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"a: [1\n", "f.yaml:1: yaml syntax: did not find expected ',' or ']'"},
		{"a: 1\n---\nb: 2\n", "f.yaml:2:1: more than one YAML document"},
		{"a: 1\n---\n", "f.yaml:2:1: more than one YAML document"},
		{"a: 1\n...\n--- x\n", "f.yaml:3:1: more than one YAML document"},
	} {
		if _, err := Parse("f.yaml", []byte(tt.src)); err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v, want %q", tt.src, err, tt.want)
		}
	}
	if n, err := Parse("f.yaml", []byte("# only a comment\n")); n != nil || err != nil {
		t.Errorf("an empty document: %v, %v; want nil, nil", n, err)
	}
}

func TestDecodeLocatesTypeErrors(t *testing.T) {
	n, err := Parse("f.yaml", []byte("n: many\nxs: [1, two, 3]\nd: soon\nm: {a: 1}\nlong: abcdefghijklmnop\n"))
	if err != nil {
		t.Fatal(err)
	}
	var i int
	var xs []float64
	var d time.Duration
	var s []int
	for _, tt := range []struct {
		at   int
		into any
		want string
	}{
		{0, &i, `f.yaml:1:4: n: "many" is not an integer`},
		{1, &xs, `f.yaml:2:9: xs: "two" is not a number`},
		{2, &d, `f.yaml:3:4: d: "soon" is not a duration (e.g. 50ms)`},
		{3, &i, `f.yaml:4:4: m: want an integer, got a mapping`},
		{0, &s, `f.yaml:1:4: n: "many" is not a list`},
		{4, &i, `f.yaml:5:7: long: "abcdefghijklmnop" is not an integer`},
	} {
		k, v := n.Content[2*tt.at], n.Content[2*tt.at+1]
		if err := Decode("f.yaml", v, k.Value, tt.into); err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%s) = %v, want %q", k.Value, err, tt.want)
		}
	}
}

func TestKeys(t *testing.T) {
	n, _ := Parse("f.yaml", []byte("grid: 1\ngrid: 2\ngrd: 3\n"))
	seen := Keys{}
	if err := seen.Add("f.yaml", n.Content[0], ""); err != nil {
		t.Fatal(err)
	}
	if err := seen.Add("f.yaml", n.Content[2], ""); err == nil || err.Error() != `f.yaml:2:1: key "grid" is given twice (first on line 1)` {
		t.Errorf("a key twice: %v", err)
	}
	if err := UnknownKey("f.yaml", n.Content[4], "", []string{"grid", "slo"}); err.Error() != `f.yaml:3:1: unknown key "grd" (did you mean "grid"?)` {
		t.Errorf("unknown key: %v", err)
	}
	if err := WantMapping("f.yaml", n.Content[1], "grid", "keys"); err == nil || err.Error() != `f.yaml:1:7: grid: want a mapping of keys, got "1"` {
		t.Errorf("want a mapping: %v", err)
	}
	if err := WantMapping("f.yaml", n, "", "keys"); err != nil {
		t.Errorf("a mapping: %v", err)
	}
}

// TestDecodeRefusesFractionsForIntegers: yaml.v3 truncates 2.9 into an
// int; Decode refuses it at its place, wherever the integer sits.
func TestDecodeRefusesFractionsForIntegers(t *testing.T) {
	type inner struct {
		Blocks int64 `yaml:"total_kv_blocks"`
	}
	type doc struct {
		Instances int            `yaml:"num_instances"`
		Rate      float64        `yaml:"rate"`
		Wait      time.Duration  `yaml:"wait"`
		Counts    []int          `yaml:"counts"`
		Classes   map[string]int `yaml:"classes"`
		Inner     inner          `yaml:"inner"`
		Any       any            `yaml:"any"`
		Ptr       *uint          `yaml:"ptr"`
	}
	for _, c := range []struct{ text, want string }{
		{"num_instances: 2.9\n", `f.yaml:1:16: doc: "2.9" is not an integer`},
		{"counts: [1, 1.99]\n", `f.yaml:1:13: doc: "1.99" is not an integer`},
		{"classes:\n  a: 999.9\n", `f.yaml:2:6: doc: "999.9" is not an integer`},
		{"inner:\n  total_kv_blocks: 1.5e0\n", `f.yaml:2:20: doc: "1.5e0" is not an integer`},
		{"ptr: 0.5\n", `f.yaml:1:6: doc: "0.5" is not an integer`},
		{"num_instances: 2.0\nrate: 2.9\nany: 1.5\ncounts: [1e3]\n", ""},
	} {
		n, err := Parse("f.yaml", []byte(c.text))
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		err = Decode("f.yaml", n, "doc", &d)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
		if c.want == "" && (d.Instances != 2 || d.Rate != 2.9 || d.Counts[0] != 1000) {
			t.Errorf("%q: decoded %+v", c.text, d)
		}
	}
}
