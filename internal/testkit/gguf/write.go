package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Write encodes f as a GGUF v3 file. Tensor data is laid out in the order of
// f.Tensors, each at the next multiple of the file's alignment. It checks the
// whole file before writing a byte, so a bad File writes nothing.
func Write(w io.Writer, f *File) error {
	if f == nil {
		return fmt.Errorf("gguf: write: nil file")
	}
	align, err := f.Alignment()
	if err != nil {
		return fmt.Errorf("gguf: write: %w", err)
	}
	offsets, _, err := f.dataLayout(align)
	if err != nil {
		return fmt.Errorf("gguf: write: %w", err)
	}
	keys := make(map[string]bool, len(f.KVs))
	for _, kv := range f.KVs {
		if kv.Key == "" {
			return fmt.Errorf("gguf: write: empty metadata key")
		}
		if keys[kv.Key] {
			return fmt.Errorf("gguf: write: metadata key %q appears twice", kv.Key)
		}
		keys[kv.Key] = true
		if _, _, err := valueType(kv.Value); err != nil {
			return fmt.Errorf("gguf: write: key %q: %w", kv.Key, err)
		}
	}

	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	buf = append(buf, Magic...)
	buf = binary.LittleEndian.AppendUint32(buf, Version)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(f.Tensors)))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(f.KVs)))
	for _, kv := range f.KVs {
		buf = appendString(buf, kv.Key)
		buf = appendValue(buf, kv.Value)
	}
	for i, t := range f.Tensors {
		buf = appendString(buf, t.Name)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			buf = binary.LittleEndian.AppendUint64(buf, d)
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(TensorF32))
		buf = binary.LittleEndian.AppendUint64(buf, offsets[i])
	}
	for uint64(len(buf))%align != 0 {
		buf = append(buf, 0)
	}
	if _, err := bw.Write(buf); err != nil {
		return fmt.Errorf("gguf: write header: %w", err)
	}

	var pos uint64
	var scratch [4]byte
	for i, t := range f.Tensors {
		for ; pos < offsets[i]; pos++ {
			if err := bw.WriteByte(0); err != nil {
				return fmt.Errorf("gguf: write tensor %q: %w", t.Name, err)
			}
		}
		for _, v := range t.Data {
			binary.LittleEndian.PutUint32(scratch[:], math.Float32bits(v))
			if _, err := bw.Write(scratch[:]); err != nil {
				return fmt.Errorf("gguf: write tensor %q: %w", t.Name, err)
			}
		}
		pos += 4 * uint64(len(t.Data))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gguf: write: %w", err)
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue appends the type tag and the encoding of v, whose type
// valueType has accepted.
func appendValue(b []byte, v any) []byte {
	t, elem, _ := valueType(v)
	b = binary.LittleEndian.AppendUint32(b, uint32(t))
	if t != TypeArray {
		return appendScalar(b, v)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(elem))
	switch a := v.(type) {
	case []uint8:
		return appendSlice(b, a)
	case []int8:
		return appendSlice(b, a)
	case []uint16:
		return appendSlice(b, a)
	case []int16:
		return appendSlice(b, a)
	case []uint32:
		return appendSlice(b, a)
	case []int32:
		return appendSlice(b, a)
	case []float32:
		return appendSlice(b, a)
	case []string:
		return appendSlice(b, a)
	case []uint64:
		return appendSlice(b, a)
	case []int64:
		return appendSlice(b, a)
	case []float64:
		return appendSlice(b, a)
	}
	return b
}

func appendSlice[T any](b []byte, a []T) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(a)))
	for _, e := range a {
		b = appendScalar(b, e)
	}
	return b
}

func appendScalar(b []byte, v any) []byte {
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		return append(b, x)
	case int8:
		return append(b, byte(x))
	case uint16:
		return le.AppendUint16(b, x)
	case int16:
		return le.AppendUint16(b, uint16(x))
	case uint32:
		return le.AppendUint32(b, x)
	case int32:
		return le.AppendUint32(b, uint32(x))
	case float32:
		return le.AppendUint32(b, math.Float32bits(x))
	case bool:
		if x {
			return append(b, 1)
		}
		return append(b, 0)
	case string:
		return appendString(b, x)
	case uint64:
		return le.AppendUint64(b, x)
	case int64:
		return le.AppendUint64(b, uint64(x))
	case float64:
		return le.AppendUint64(b, math.Float64bits(x))
	}
	return b
}
