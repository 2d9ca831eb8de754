package importer

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// genReader produces n generated lines on the fly, so the input is never held
// in memory by the test.
type genReader struct {
	head string
	n, i int
	line func(i int) string
	buf  []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.head != "":
			g.buf, g.head = []byte(g.head), ""
		case g.i < g.n:
			g.buf = []byte(g.line(g.i))
			g.i++
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// heapAfterGC is the live heap in bytes.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// drainFlat imports every record and checks that the live heap after the
// first 1000 records and at the end differ by less than limit bytes.
func drainFlat(t *testing.T, imp Importer, n int, limit uint64) {
	t.Helper()
	var early uint64
	for i := 0; ; i++ {
		_, err := imp.Next()
		if err == io.EOF {
			if i != n {
				t.Fatalf("got %d records, want %d", i, n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i == 1000 {
			early = heapAfterGC()
		}
	}
	late := heapAfterGC()
	if late > early+limit {
		t.Errorf("live heap grew from %d to %d bytes over %d records: memory is not flat", early, late, n)
	}
}

func TestMemoryFlatStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("memory check skipped in -short mode")
	}
	const n = 30000 // a leak of 18 bytes per record would exceed the 512 KiB limit
	t.Run("mooncake", func(t *testing.T) {
		g := &genReader{n: n, line: func(i int) string {
			return fmt.Sprintf(`{"timestamp": %d, "input_length": 1500, "output_length": 20, "hash_ids": [0, %d, %d, %d]}`+"\n", i, 3*i+1, 3*i+2, 3*i+3)
		}}
		imp, err := NewMooncake("gen.jsonl", g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		drainFlat(t, imp, n, 512<<10)
	})
	t.Run("azure", func(t *testing.T) {
		t0 := time.Date(2023, 11, 16, 18, 0, 0, 0, time.UTC)
		g := &genReader{head: azHead, n: n, line: func(i int) string {
			ts := t0.Add(time.Duration(i) * 10 * time.Millisecond).Format("2006-01-02 15:04:05.0000000")
			return fmt.Sprintf("%s,%d,%d\r\n", ts, i%5000, i%300)
		}}
		imp, err := NewAzure("gen.csv", g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		drainFlat(t, imp, n, 512<<10)
	})
	t.Run("vllm", func(t *testing.T) {
		// vllm needs random access: write the file (about 2.5 MB) first.
		path := filepath.Join(t.TempDir(), "bench.json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		arr := func(key string, elem func(i int) string) {
			fmt.Fprintf(w, "%q: [", key)
			for i := 0; i < n; i++ {
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(elem(i))
			}
			w.WriteString("], ")
		}
		w.WriteString("{")
		arr("input_lens", func(i int) string { return strconv.Itoa(100 + i%1000) })
		arr("output_lens", func(i int) string { return "3" })
		arr("ttfts", func(i int) string { return "0.05" })
		arr("itls", func(i int) string { return "[0.01, 0.012]" })
		arr("start_times", func(i int) string { return strconv.FormatFloat(1000+float64(i)*0.01, 'f', -1, 64) })
		arr("generated_texts", func(i int) string { return `"` + strings.Repeat("x", 40) + `"` })
		arr("errors", func(i int) string { return `""` })
		w.WriteString(`"model_id": "m"}`)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		imp, err := NewVLLM(path, openFile(t, path), Options{})
		if err != nil {
			t.Fatal(err)
		}
		drainFlat(t, imp, n, 512<<10)
	})
}

// The importer may import only the standard library, gocsv and its parent
// package tracev2 (docs/ARCHITECTURE.md: tracev2 is a leaf; importers know no simulator).
func TestImportRules(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !strings.HasPrefix(path, "servesim")
			if !std && path != "github.com/gocarina/gocsv" && path != "servesim/internal/tracev2" && path != "servesim/internal/jsonscan" {
				t.Errorf("%s imports %s: only the standard library, gocsv, tracev2 and jsonscan are allowed", name, path)
			}
		}
	}
}
