package deploy

import (
	"errors"
	"fmt"

	"servesim/internal/exitcode"
	"servesim/internal/strictyaml"
)

// KeyError is a value one deployment key cannot take: the key (its YAML
// name) and what is wrong with the value, with no place; the caller knows
// where the value was written.
type KeyError struct {
	Key string
	Msg string
}

func (e *KeyError) Error() string { return fmt.Sprintf("key %s: %s", e.Key, e.Msg) }

// ExitCode is 2: invalid input.
func (e *KeyError) ExitCode() int { return exitcode.Usage }

// SetKey sets one key of cfg (by its YAML name) from value, the
// key's value as a deployment file writes it after "key: " (YAML: 16,
// H100, [0.1, 2]). It accepts exactly what a deployment file does: a value
// of the wrong type, or one that is invalid alone (max_num_seqs: 0), is a
// *KeyError. Values that must agree with other keys are Resolve's to check.
func SetKey(cfg Config, name, value string) (Config, error) {
	k, ok := keysByName()[name]
	if !ok {
		return cfg, &KeyError{Key: name, Msg: "not a deployment key"}
	}
	n, err := strictyaml.Parse(name, []byte(value))
	if err != nil {
		return cfg, keyError(k.name, err)
	}
	if n == nil {
		return cfg, &KeyError{Key: k.name, Msg: "no value"}
	}
	out := cfg
	if err := k.decode(name, n, &out); err != nil {
		return cfg, keyError(k.name, err)
	}
	for _, p := range out.problems() {
		if p.key == k.name {
			return cfg, &KeyError{Key: k.name, Msg: p.msg}
		}
	}
	return out, nil
}

// keyError is a strict YAML error about key's value as a KeyError, its
// place left out.
func keyError(key string, err error) error {
	var e *strictyaml.Error
	if errors.As(err, &e) {
		return &KeyError{Key: key, Msg: e.Msg}
	}
	return &KeyError{Key: key, Msg: err.Error()}
}
