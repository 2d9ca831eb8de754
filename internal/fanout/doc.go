// Package fanout splits a job over independent worker processes started by
// an existing engine (a Kubernetes Indexed Job, a Slurm array, GNU
// parallel, a CI matrix): the worker's slice I of N, how --shard names it,
// and where the engine's environment says I.
//
// It is a leaf: it knows no job it splits and imports nothing of the suite
// but flagspec, the description of its flag.
package fanout
