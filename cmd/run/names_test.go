package main

import (
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// TestUnroutedRequestHasNoInstance: a request refused before it reached an
// instance has an empty ext_instance, not "instance_-1".
func TestUnroutedRequestHasNoInstance(t *testing.T) {
	out, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "10", "--num-requests", "5", "--num-instances", "2",
		"--admission-policy", "reject-all", "--trace-output", "-", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tr, err := tracev2.Load(tracev2.Input{Path: "-", Stdin: strings.NewReader(out)}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Records) != 5 {
		t.Fatalf("%d rows, want 5", len(tr.Records))
	}
	for _, r := range tr.Records {
		if r.Instance != "" || r.Status != "incomplete" || r.ErrorMessage != "rejected: admission" {
			t.Errorf("row %d: instance %q status %q %q; want \"\", incomplete, rejected: admission", r.RequestID, r.Instance, r.Status, r.ErrorMessage)
		}
	}
}
