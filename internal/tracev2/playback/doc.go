// Package playback is the one rule by which a recorded trace is played
// back, by the simulator (replay) and against a live server (observe
// --trace): when a row is injected, what deadline it keeps, and, for
// closed-loop sessions, how long the client thinks before each round and
// whether a session goes on after a failed round (docs/simulator.md §13).
//
// It works on one row at a time and holds no rows: each caller reads the
// trace its own way (replay lazily, in constant memory; observe whole, to
// plan it) and asks the rule about the row in hand. It knows TraceV2 and
// nothing else: no simulator, no load generator.
package playback
