// Package strictyaml is the suite's one strict YAML decoder with located
// errors. Every YAML input a user writes (deployment files, workload specs,
// sweep files) is parsed and decoded here, so that every mistake reads the
// same way:
//
//	dep.yaml:3:15: max_num_seqs: "many" is not an integer
//	dep.yaml:4:1: unknown key "max_num_sqs" (did you mean "max_num_seqs"?)
//	dep.yaml:5:1: key "block_size" is given twice (first on line 2)
//	dep.yaml:1:1: want a mapping of deployment keys, got a list
//	dep.yaml:2: yaml syntax: did not find expected ',' or ']'
//
// that is FILE:LINE:COLUMN: PATH: WHAT, where PATH names the key (or the
// list element) and is left out at the top. yaml.v3 gives only a line for a
// syntax error. Every error has exit code 2 (invalid input).
//
// It knows no domain: callers name their keys and what they expect.
package strictyaml
