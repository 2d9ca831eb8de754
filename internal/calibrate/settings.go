package calibrate

import (
	"os"

	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/tracev2/input"
)

// MaxNetworkRTTUs bounds --network-rtt-us: a round trip of more than ten
// seconds is no network a trace was measured over, and a larger one only
// overflows the times it is added to.
const MaxNetworkRTTUs = 10_000_000

// CheckNetworkRTT checks --network-rtt-us: -1 (the header's RTT) or a
// round trip in [0, MaxNetworkRTTUs].
func CheckNetworkRTT(us int64) error {
	if us < -1 || us > MaxNetworkRTTUs {
		return exitcode.Usagef("--network-rtt-us %d: want -1 (the header's RTT) or a round trip in [0, %d] (10 s)", us, int64(MaxNetworkRTTUs))
	}
	return nil
}

// checkFitFiles refuses, before any trace is read, a trace given twice
// (the same file under any name: it would count twice in the fit) and an
// output that cannot be written or would replace an input (outfile.Check).
func checkFitFiles(f Fit, inputs []input.Config) error {
	var ins []outfile.Named
	var seen []os.FileInfo
	var names []string
	for _, in := range inputs {
		for _, p := range append(append([]string{}, in.Paths...), in.DataPath) {
			st, err := os.Stat(p)
			if p == "" || p == "-" || err != nil || !st.Mode().IsRegular() {
				continue
			}
			for i, s := range seen {
				if os.SameFile(s, st) {
					return exitcode.Usagef("%s is the same trace as %s: a trace given twice would count twice in the fit; give it once", p, names[i])
				}
			}
			seen, names = append(seen, st), append(names, p)
		}
		ins = append(ins, in.Files()...)
	}
	ins = append(ins, outfile.Named{What: "--itl-data", Path: f.Traces.ITLData})
	return outfile.Check([]outfile.Named{{What: "--output", Path: f.Output}}, append(ins, f.Inputs...))
}
