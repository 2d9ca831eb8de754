package replay

// inputError is a request the caller can fix (a bad trace or an
// unsupported configuration): exit code 2 at the command line.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// ExitCode is 2: bad usage or invalid input, as for every binary.
func (e *inputError) ExitCode() int { return 2 }

func usageError(msg string) error { return &inputError{msg: msg} }
