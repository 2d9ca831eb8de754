// Package sweepcmd is the command-line edge of the sweeps that `run sweep`
// and `replay sweep` share (and that a live-server sweep can share): the
// sweep flags, reading the sweep spec from a file and flags, the shard of
// a fanned-out sweep, writing the tables and the HTML page, and the
// `sweep merge` subcommand that joins the shards' outputs.
//
// It sits beside internal/cli (it imports urfave/cli); unlike internal/cli
// it knows the sweep package and the report that renders a sweep. It never
// knows the simulator: the commands hand it finished sweep documents.
package sweepcmd
