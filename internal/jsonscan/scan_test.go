package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// valid is what Skip then End accept: a document of one value.
func valid(doc []byte) bool {
	s := New(doc)
	return s.Skip() == nil && s.End() == nil
}

// TestValidIsEncodingJSONs: the scanner accepts exactly the documents
// encoding/json accepts, but those nested deeper than MaxDepth.
func TestValidIsEncodingJSONs(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, ` {"a": [1, -2.5e+3, "x", true, false, null, {"b": {}}]} `, `"\u00e9\n"`, `0`, `-0.0E-1`,
		`{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.5`, `+1`, `1e`, `"\x"`, "\"a\x01\"", `"\u12g4"`, `tru`, `nul`,
		`{"a":1} x`, `[1 2]`, `{1: 2}`, ``, ` `, `[`, `{"a":`, `"abc`, "\"\xff\"",
	} {
		if got, want := valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("%q: scanner says valid %v, encoding/json %v", doc, got, want)
		}
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if valid([]byte(deep)) || !valid([]byte(deep[1:len(deep)-1])) {
		t.Errorf("nesting: %d levels accepted %v, %d levels %v; want false and true",
			MaxDepth+1, valid([]byte(deep)), MaxDepth, valid([]byte(deep[1:len(deep)-1])))
	}
}

// TestObjectReadsWhatItIsAskedFor: Object hands each key (unescaped) to
// its callback, which reads the value it wants and skips the others.
func TestObjectReadsWhatItIsAskedFor(t *testing.T) {
	s := New([]byte(`{"n": 12, "s": "hi", "k\u0065y": [1, {"x": null}], "t": 1.5}`))
	got := map[string]string{}
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "n", "t":
			v, err := s.Num()
			got[string(key)] = string(v)
			return err
		case "s":
			v, err := s.Str()
			got["s"] = string(v)
			return err
		default:
			got[string(key)] = "skipped"
			return s.Skip()
		}
	})
	if err != nil || s.End() != nil {
		t.Fatal(err)
	}
	want := map[string]string{"n": "12", "s": "hi", "key": "skipped", "t": "1.5"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// FuzzValid: on any input, the scanner and encoding/json agree on
// validity, but for documents nested deeper than MaxDepth; a window cut
// inside a valid document asks for more.
func FuzzValid(f *testing.F) {
	f.Add([]byte(`{"a": [1, "b", null]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) <= 256 {
			checkWindows(t, doc)
		}
		got, want := valid(doc), json.Valid(doc)
		if got == want {
			return
		}
		if !got && want && strings.Count(string(doc), "[")+strings.Count(string(doc), "{") > MaxDepth {
			return // possibly deeper than the scanner goes
		}
		t.Fatalf("%q: scanner says valid %v, encoding/json %v", doc, got, want)
	})
}

// checkWindows: a window that ends inside a valid document asks for more
// (More), and never calls the bytes so far invalid without it.
func checkWindows(t *testing.T, doc []byte) {
	t.Helper()
	start := Space(doc, 0)
	full, st := Value(doc, start, MaxDepth)
	if st.Bad() || Space(doc, full) != len(doc) {
		return // not one valid value
	}
	for k := start; k < full; k++ {
		end, st := Value(doc[:k], start, MaxDepth)
		if st&More == 0 {
			t.Fatalf("%q cut at %d: status %#x at %d (%s), want More", doc, k, uint8(st), end, st.Why())
		}
	}
}

// TestWindows runs checkWindows on documents of every kind of token.
func TestWindows(t *testing.T) {
	for _, doc := range []string{`{"a": [1, -2.5e+3, "x\"y\u00e9", true, false, null, {"b": {}}]}`, `-0.0E-1`, `"\u12ab"`, `[[], {}]`} {
		checkWindows(t, []byte(doc))
	}
}

// TestInt: Int reads the integers of int64 and refuses other numbers and
// what is not a number.
func TestInt(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {" -0", 0, true}, {"42", 42, true}, {"-9223372036854775807", -9223372036854775807, true},
		{"9223372036854775807", 9223372036854775807, true}, {"9223372036854775808", 0, false},
		{"01", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}, {"-", 0, false}, {"x", 0, false}, {"", 0, false},
	} {
		s := New([]byte(tc.doc))
		got, err := s.Int()
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %d, %v; want %d, ok %v", tc.doc, got, err, tc.want, tc.ok)
		}
	}
}
