package workload

import (
	"errors"
	"testing"
)

// FuzzDecode: decoding any bytes never panics, every failure is an *Error
// with exit code 2, and a spec that decodes can be compiled and streamed.
func FuzzDecode(f *testing.F) {
	// More seeds live in testdata/fuzz/FuzzDecode.
	f.Add([]byte(base))
	f.Add([]byte(twoClients))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, _, err := Decode("fuzz.yaml", data, t.TempDir())
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.ExitCode() != 2 {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			return
		}
		if spec.NumRequests == 0 || spec.NumRequests > 50 {
			spec.NumRequests = 50
		}
		w, err := New(*spec)
		if err != nil {
			return
		}
		src := w.NewSource()
		for i := 0; i < 60; i++ {
			r, ok := src.Next()
			if !ok {
				break
			}
			if r.InputTokens != len(r.PromptIDs)-r.PrefixLength || r.OutputTokens < 1 {
				t.Fatalf("inconsistent request %+v", r)
			}
			if fu, ok := src.OnComplete(r.ID, r.ArrivalUs+1000, r.OutputTokens); ok && fu.ArrivalUs < r.ArrivalUs {
				t.Fatalf("follow-up %d arrives before its cause", fu.ID)
			}
		}
		src.Finish()
		if c := src.Sessions(); c.Active != 0 {
			t.Fatalf("active sessions after Finish: %+v", c)
		}
	})
}
