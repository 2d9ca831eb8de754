package cli

import (
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/des/sim"
	"servesim/internal/flagspec"
)

// ClientFlags are the flags of the simulated client (simulator.md §13): the
// load generator's cap on requests in flight. replay also reads the cap
// from the trace (detect is then true: its flags add --detect-client).
func ClientFlags(detect bool) []ucli.Flag {
	capUsage := "the client keeps at most N requests in flight; a request that arrives while N are in flight waits " +
		"in the client's queue and is sent when one ends (as observe --max-concurrency and vllm bench serve --max-concurrency do); 0 = an open loop"
	var aliases []string
	def := 0
	if detect {
		def = -1
	} else {
		aliases = []string{"max-concurrency"}
	}
	flags := []ucli.Flag{
		&ucli.IntFlag{Name: "client-max-concurrency", Aliases: aliases, Value: def, DefaultText: defaultCapText(detect), Usage: capUsage},
		&ucli.DurationFlag{Name: "client-send-gap", Usage: "the capped client's delay from a request's end to the next send", DefaultText: map[bool]string{true: "0, or detected from the trace", false: "0"}[detect]},
	}
	if detect {
		flags = append(flags, &ucli.BoolFlag{Name: "detect-client", Value: true,
			Usage: "look for a capped client in the trace (in-flight requests pinned at a peak while late sends follow ends) and replay it; --detect-client=false replays an open loop unless --client-max-concurrency is given"})
	}
	return InCategory(flagspec.CatClient, flags...)
}

func defaultCapText(detect bool) string {
	if detect {
		return "the trace's client: its header, else detected from its rows"
	}
	return "0, an open loop"
}

// ClientFromFlags is the client the flags give, and whether they gave a
// cap at all (false: replay takes the trace's). The values are bounded.
func ClientFromFlags(c *ucli.Context) (sim.Client, bool, error) {
	n := c.Int("client-max-concurrency")
	gap := c.Duration("client-send-gap")
	if gap < 0 || gap > time.Duration(sim.MaxSendGapUs)*time.Microsecond {
		return sim.Client{}, false, Usagef("--client-send-gap %v is outside [0, %v]", gap, time.Duration(sim.MaxSendGapUs)*time.Microsecond)
	}
	if n < -1 || n > sim.MaxClientConcurrency {
		return sim.Client{}, false, Usagef("--client-max-concurrency %d is outside [0, %d]", n, sim.MaxClientConcurrency)
	}
	cl := sim.Client{MaxConcurrency: max(n, 0), SendGapUs: gap.Microseconds()}
	return cl, n >= 0 && c.IsSet("client-max-concurrency"), nil
}
