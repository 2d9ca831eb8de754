package gguf

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// small is a file with one value of every supported type and two tensors
// whose sizes force padding between them.
func small() *File {
	return &File{
		KVs: []KV{
			{"u8", uint8(7)}, {"i8", int8(-7)}, {"u16", uint16(700)}, {"i16", int16(-700)},
			{"u32", uint32(70000)}, {"i32", int32(-70000)}, {"f32", float32(1.5)}, {"b", true},
			{"s", "héllo"}, {"u64", uint64(1) << 40}, {"i64", int64(-1) << 40}, {"f64", 2.25},
			{"au8", []uint8{1, 2}}, {"ai8", []int8{-1}}, {"au16", []uint16{3}}, {"ai16", []int16{-3}},
			{"au32", []uint32{4, 5}}, {"ai32", []int32{-4}}, {"af32", []float32{0.5, -0.5}},
			{"as", []string{"a", "", "ç"}}, {"au64", []uint64{9}}, {"ai64", []int64{-9}},
			{"af64", []float64{0.125}}, {"empty", []string{}},
		},
		Tensors: []Tensor{
			{Name: "a", Dims: []uint64{3}, Data: []float32{1, 2, 3}},
			{Name: "b", Dims: []uint64{2, 2}, Data: []float32{-1, 0, 1, 2}},
		},
	}
}

func encode(t testing.TB, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	model, err := NewLlama(DefaultLlama())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    *File
	}{{"every value type", small()}, {"default llama", model}} {
		t.Run(tc.name, func(t *testing.T) {
			b := encode(t, tc.f)
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.f) {
				t.Errorf("decoded file differs from the one written")
			}
			if again := encode(t, got); !bytes.Equal(again, b) {
				t.Errorf("re-encoding changed %d bytes to %d", len(b), len(again))
			}
		})
	}
}

func TestLayout(t *testing.T) {
	b := encode(t, small())
	if got, want := string(b[:4]), "GGUF"; got != want {
		t.Errorf("magic = %q, want %q", got, want)
	}
	if got, want := b[4], byte(3); got != want {
		t.Errorf("version byte = %d, want %d", got, want)
	}
	// Tensor "a" is 12 bytes, so "b" starts at data offset 32; the data
	// section starts at a multiple of 32 and the file ends with b's 16 bytes.
	if got, want := len(b)%32, 32-16; got != want {
		t.Errorf("file length %d mod 32 = %d, want %d", len(b), got, want)
	}
	if got, want := b[len(b)-4:], []byte{0, 0, 0, 0x40}; !bytes.Equal(got, want) { // float32(2)
		t.Errorf("last 4 bytes = %x, want %x", got, want)
	}
}

func TestDefaultLlamaShapeAndDeterminism(t *testing.T) {
	f, err := NewLlama(DefaultLlama())
	if err != nil {
		t.Fatal(err)
	}
	b := encode(t, f)
	if got, lo, hi := len(b), 13<<20, 15<<20; got < lo || got > hi {
		t.Errorf("default model is %d bytes, want about 14 MB", got)
	}
	f2, _ := NewLlama(DefaultLlama())
	if !bytes.Equal(encode(t, f2), b) {
		t.Errorf("two builds of the same config differ")
	}
	cfg := DefaultLlama()
	cfg.Seed = 2
	f3, _ := NewLlama(cfg)
	if bytes.Equal(encode(t, f3), b) {
		t.Errorf("seed 2 gives the same bytes as seed 1")
	}
	sum := sha256.Sum256(b)
	// The recipe is frozen: a change of weights changes the server's timings
	// the e2e thresholds were measured with. Update only on purpose.
	const want = "39273d5ad4f9f34125802f1fedd75e6fd6d4137537ef242a4a68e2c05da81ae3"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("sha256 of the default model = %s, want %s", got, want)
	}
	wantTensors := 3 + 9*4
	if got := len(f.Tensors); got != wantTensors {
		t.Errorf("tensors = %d, want %d", got, wantTensors)
	}
	for _, tc := range []struct {
		key  string
		want any
	}{
		{"general.architecture", "llama"},
		{"llama.embedding_length", uint32(256)},
		{"llama.block_count", uint32(4)},
		{"llama.attention.head_count", uint32(4)},
		{"llama.feed_forward_length", uint32(768)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.eos_token_id", uint32(EOSID)},
		{"tokenizer.ggml.add_bos_token", false},
	} {
		if got, _ := f.Get(tc.key); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestByteToken(t *testing.T) {
	seen := map[string]int{}
	for b := 0; b < 256; b++ {
		s := ByteToken(byte(b))
		if r := []rune(s); len(r) != 1 {
			t.Fatalf("ByteToken(%d) = %q, want one rune", b, s)
		}
		if prev, ok := seen[s]; ok {
			t.Fatalf("ByteToken(%d) = ByteToken(%d) = %q", b, prev, s)
		}
		seen[s] = b
	}
	for _, tc := range []struct {
		b    byte
		want rune
	}{{'a', 'a'}, {'~', '~'}, {0, 256}, {' ', 256 + 32}, {'\n', 256 + 10}, {0x7F, 256 + 33}, {0xAD, 256 + 67}, {0xFF, 0xFF}} {
		if got := []rune(ByteToken(tc.b))[0]; got != tc.want {
			t.Errorf("ByteToken(%#x) = U+%04X, want U+%04X", tc.b, got, tc.want)
		}
	}
}

func TestAllowed(t *testing.T) {
	n := 0
	for id := 0; id < VocabSize; id++ {
		if Allowed(id) {
			n++
		}
	}
	if got, want := n, 52; got != want {
		t.Errorf("allowed tokens = %d, want %d", got, want)
	}
	for _, id := range []int{EOSID, BOSID, ' ', '\n', '.', '0', 0xC3, 0x80} {
		if Allowed(id) {
			t.Errorf("Allowed(%d) = true, want false", id)
		}
	}
}

func TestWriteRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *File
		want string
	}{
		{"nil", nil, "nil file"},
		{"duplicate key", &File{KVs: []KV{{"a", uint32(1)}, {"a", uint32(2)}}}, `"a" appears twice`},
		{"empty key", &File{KVs: []KV{{"", uint32(1)}}}, "empty metadata key"},
		{"bad value", &File{KVs: []KV{{"a", 3}}}, "unsupported value type int"},
		{"bool array", &File{KVs: []KV{{"a", []bool{true}}}}, "unsupported value type []bool"},
		{"bad alignment", &File{KVs: []KV{{"general.alignment", uint32(3)}}}, "not a power of two"},
		{"short data", &File{Tensors: []Tensor{{Name: "t", Dims: []uint64{2}, Data: []float32{1}}}}, "has 1 values"},
		{"no dims", &File{Tensors: []Tensor{{Name: "t", Data: []float32{1}}}}, "0 dims"},
		{"zero dim", &File{Tensors: []Tensor{{Name: "t", Dims: []uint64{0}}}}, "dim 0"},
		{"no name", &File{Tensors: []Tensor{{Dims: []uint64{1}, Data: []float32{1}}}}, "no name"},
		{"duplicate tensor", &File{Tensors: []Tensor{{Name: "t", Dims: []uint64{1}, Data: []float32{1}}, {Name: "t", Dims: []uint64{1}, Data: []float32{1}}}}, `"t" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tc.f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write error = %v, want it to contain %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("a rejected file wrote %d bytes", buf.Len())
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	good := encode(t, small())
	for n := 0; n < len(good); n++ {
		if _, err := Decode(good[:n]); err == nil {
			t.Fatalf("Decode of the first %d of %d bytes succeeded", n, len(good))
		}
	}
	patch := func(off int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[off:], b)
		return c
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"magic", patch(0, 'G', 'G', 'M', 'L'), "magic"},
		{"version", patch(4, 2), "version 2"},
		{"huge counts", patch(8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F), "cannot fit"},
		{"truncated", good[:len(good)-1], "unexpected end of file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Decode(good[:len(good)-1]); !errors.Is(err, errShort) {
		t.Errorf("truncated file error %v does not wrap errShort", err)
	}
}

func TestNewLlamaRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*LlamaConfig)
		want string
	}{
		{"heads", func(c *LlamaConfig) { c.Heads = 3 }, "divide embed"},
		{"kv heads", func(c *LlamaConfig) { c.KVHeads = 3 }, "divide heads"},
		{"layers", func(c *LlamaConfig) { c.Layers = 0 }, "layers 0"},
		{"ffn", func(c *LlamaConfig) { c.FFN = 0 }, "ffn 0"},
		{"context", func(c *LlamaConfig) { c.Context = 1 }, "context 1"},
		{"embed", func(c *LlamaConfig) { c.Embed = 4 }, "embed 4"},
		{"odd head size", func(c *LlamaConfig) { c.Embed, c.Heads, c.KVHeads = 12, 4, 4 }, "must be even"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultLlama()
			tc.mod(&cfg)
			_, err := NewLlama(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewLlama error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(f, small()))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Decode(b)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, file); err != nil {
			return // e.g. duplicate keys decode but are refused on write
		}
		again, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(again, file) && !hasNaN(file) {
			t.Fatalf("decode, write, decode changed the file")
		}
	})
}

// hasNaN reports whether f holds a NaN, which DeepEqual never finds equal.
func hasNaN(f *File) bool {
	for _, t := range f.Tensors {
		for _, v := range t.Data {
			if v != v {
				return true
			}
		}
	}
	for _, kv := range f.KVs {
		switch x := kv.Value.(type) {
		case float32:
			if x != x {
				return true
			}
		case float64:
			if x != x {
				return true
			}
		case []float32:
			for _, v := range x {
				if v != v {
					return true
				}
			}
		case []float64:
			for _, v := range x {
				if v != v {
					return true
				}
			}
		}
	}
	return false
}
