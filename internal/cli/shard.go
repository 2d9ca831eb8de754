package cli

import (
	ucli "github.com/urfave/cli/v2"

	"servesim/internal/fanout"
)

// Shard is fanout.Shard, under the name the sweep commands use.
type Shard = fanout.Shard

// MaxShards bounds the number of workers a job can be split into.
const MaxShards = fanout.MaxShards

// ShardFlag is the shared `--shard` flag (fanout.Flag).
func ShardFlag() ucli.Flag { return specFlag(fanout.Flag()) }

// ParseShard reads a `--shard` value (fanout.Parse).
func ParseShard(v string, getenv func(string) string) (Shard, error) { return fanout.Parse(v, getenv) }
