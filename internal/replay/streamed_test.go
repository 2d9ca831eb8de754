package replay

import (
	"bytes"
	"os"
	"testing"
)

// TestHeldOutput: held bytes come out in order whether they stayed in
// memory or went to the spill file, and none when discarded.
func TestHeldOutput(t *testing.T) {
	var w bytes.Buffer
	h := &heldOutput{w: &w, limit: 100}
	var want []byte
	for i := 0; i < 50; i++ {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 7+i%5)
		want = append(want, p...)
		if n, err := h.Write(p); n != len(p) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	if w.Len() != 0 || h.spill == nil {
		t.Fatalf("%d bytes through before release, spilled %v", w.Len(), h.spill != nil)
	}
	spill := h.spill.Name()
	if err := h.release(); err != nil {
		t.Fatal(err)
	}
	h.Write([]byte("after"))
	if got := w.String(); got != string(want)+"after" {
		t.Errorf("released %q, want %q", got, string(want)+"after")
	}
	if _, err := os.Stat(spill); !os.IsNotExist(err) {
		t.Errorf("spill file left: %v", err)
	}
	var d bytes.Buffer
	h = &heldOutput{w: &d, limit: 10}
	h.Write(bytes.Repeat([]byte("x"), 30))
	spill = h.spill.Name()
	h.discard()
	if _, err := os.Stat(spill); d.Len() != 0 || !os.IsNotExist(err) {
		t.Errorf("discarded: %d bytes out, spill file: %v", d.Len(), err)
	}
}
