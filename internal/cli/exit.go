package cli

import (
	"fmt"
	"io"

	"servesim/internal/exitcode"
)

// Report prints err on stderr as one line prefixed by the program name
// (control characters escaped, length bounded: errorLine) and returns the
// exit code for it (exitcode.Of).
func Report(prog string, err error, stderr io.Writer) int {
	code := exitcode.Of(err)
	if err != nil && err.Error() != "" {
		fmt.Fprintf(stderr, "%s: %s\n", prog, errorLine(err.Error()))
	}
	return code
}
