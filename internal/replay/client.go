package replay

import (
	"servesim/internal/des/sim"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// Client is the load generator that sent a trace's requests, as the replay
// models it (docs/simulator.md §13): at most MaxConcurrency requests in flight
// (0 = an open loop), the next waiting request sent SendGapUs after a slot
// frees. A capped client's rows are injected at their intended arrival
// (arrival_time_us) and the cap decides their send.
type Client = sim.Client

// ClientFinding is what DetectClient read in a trace: the finding, and
// the client the replay models from it (zero unless Capped).
type ClientFinding struct {
	tracev2.CapFinding
	Client Client
}

// DetectClient reads the rows once and looks for a capped client: requests
// in flight pinned at a peak N while the late requests are sent right after
// others end. Rows with no send time or no end (last chunk) are left out of
// the count; a trace whose client never had to wait shows no cap, and none
// is needed to replay it.
func DetectClient(rows Rows) (ClientFinding, error) {
	type span struct{ arrival, send, end int64 }
	var spans []span
	err := input.Each(rows, func(rec *tracev2.Record) error {
		if a, s, e, ok := tracev2.RecordSpan(rec); ok {
			spans = append(spans, span{a, s, e})
		}
		return nil
	})
	if err != nil {
		return ClientFinding{}, err
	}
	f := ClientFinding{CapFinding: tracev2.FindClientCap(len(spans), func(i int) (int64, int64, int64) {
		s := spans[i]
		return s.arrival, s.send, s.end
	})}
	if f.Capped {
		f.Client = Client{MaxConcurrency: f.MaxConcurrency, SendGapUs: f.SendGapUs}
	}
	return f, nil
}
