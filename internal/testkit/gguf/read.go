package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// errShort is the cause of every read past the end of the input.
var errShort = errors.New("unexpected end of file")

// decoder reads little-endian fields from a byte slice and remembers the
// offset, so every error names the byte where it happened.
type decoder struct {
	b   []byte
	off uint64
}

func (d *decoder) take(n uint64) ([]byte, error) {
	if n > uint64(len(d.b))-d.off {
		return nil, fmt.Errorf("offset %d: need %d bytes: %w", d.off, n, errShort)
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s, nil
}

func (d *decoder) u32() (uint32, error) {
	s, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

func (d *decoder) u64() (uint64, error) {
	s, err := d.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

func (d *decoder) str() (string, error) {
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	s, err := d.take(n)
	if err != nil {
		return "", err
	}
	return string(s), nil
}

// remaining is how many bytes are left.
func (d *decoder) remaining() uint64 { return uint64(len(d.b)) - d.off }

// Decode parses a whole GGUF v3 file held in b. It never panics on bad
// input: counts and sizes are checked against the bytes left before anything
// is allocated. Only F32 tensors are decoded.
func Decode(b []byte) (*File, error) {
	d := &decoder{b: b}
	magic, err := d.take(4)
	if err != nil {
		return nil, fmt.Errorf("gguf: magic: %w", err)
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("gguf: magic %q, want %q", magic, Magic)
	}
	version, err := d.u32()
	if err != nil {
		return nil, fmt.Errorf("gguf: version: %w", err)
	}
	if version != Version {
		return nil, fmt.Errorf("gguf: version %d, want %d", version, Version)
	}
	nTensors, err := d.u64()
	if err != nil {
		return nil, fmt.Errorf("gguf: tensor count: %w", err)
	}
	nKVs, err := d.u64()
	if err != nil {
		return nil, fmt.Errorf("gguf: metadata count: %w", err)
	}
	// Each KV takes at least 8+4+1 bytes and each tensor info 8+4+8+4+8.
	if nKVs > d.remaining()/13 || nTensors > d.remaining()/32 {
		return nil, fmt.Errorf("gguf: %d metadata entries and %d tensors cannot fit in %d bytes", nKVs, nTensors, d.remaining())
	}
	f := &File{KVs: make([]KV, 0, nKVs), Tensors: make([]Tensor, 0, nTensors)}
	if err := d.metadata(f, nKVs); err != nil {
		return nil, err
	}
	align, err := f.Alignment()
	if err != nil {
		return nil, err
	}
	offsets, err := d.tensorInfos(f, nTensors, align)
	if err != nil {
		return nil, err
	}
	base := alignUp(d.off, align)
	if base > uint64(len(b)) {
		return nil, fmt.Errorf("gguf: tensor data: offset %d: %w", base, errShort)
	}
	if err := f.readData(b[base:], offsets); err != nil {
		return nil, err
	}
	return f, nil
}

// metadata reads n key-value pairs into f.KVs.
func (d *decoder) metadata(f *File, n uint64) error {
	for i := uint64(0); i < n; i++ {
		key, err := d.str()
		if err != nil {
			return fmt.Errorf("gguf: metadata %d key: %w", i, err)
		}
		t, err := d.u32()
		if err != nil {
			return fmt.Errorf("gguf: metadata %q type: %w", key, err)
		}
		v, err := d.value(ValueType(t))
		if err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
		f.KVs = append(f.KVs, KV{Key: key, Value: v})
	}
	return nil
}

// tensorInfos reads n tensor infos into f.Tensors (names and dims, no data
// yet) and returns each tensor's offset in the data section, a multiple of
// align.
func (d *decoder) tensorInfos(f *File, n, align uint64) ([]uint64, error) {
	offsets := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		name, err := d.str()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %d name: %w", i, err)
		}
		nd, err := d.u32()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", name, err)
		}
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("gguf: tensor %q has %d dims, want 1 to 4", name, nd)
		}
		dims := make([]uint64, nd)
		for j := range dims {
			if dims[j], err = d.u64(); err != nil {
				return nil, fmt.Errorf("gguf: tensor %q dims: %w", name, err)
			}
		}
		tt, err := d.u32()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q type: %w", name, err)
		}
		if TensorType(tt) != TensorF32 {
			return nil, fmt.Errorf("gguf: tensor %q has type %d, only F32 (0) is supported", name, tt)
		}
		off, err := d.u64()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q offset: %w", name, err)
		}
		if off%align != 0 {
			return nil, fmt.Errorf("gguf: tensor %q offset %d is not a multiple of %d", name, off, align)
		}
		f.Tensors = append(f.Tensors, Tensor{Name: name, Dims: dims})
		offsets = append(offsets, off)
	}
	return offsets, nil
}

// readData fills each tensor's Data from the data section, the tensor at
// offsets[i] from its start; sizes are checked against the section before
// anything is allocated.
func (f *File) readData(data []byte, offsets []uint64) error {
	for i := range f.Tensors {
		t := &f.Tensors[i]
		n := uint64(1)
		for _, dim := range t.Dims {
			if dim == 0 || dim > uint64(len(data)) {
				return fmt.Errorf("gguf: tensor %q has dim %d for %d data bytes", t.Name, dim, len(data))
			}
			n *= dim
			if n > uint64(len(data)) {
				return fmt.Errorf("gguf: tensor %q needs more than the %d data bytes", t.Name, len(data))
			}
		}
		off := offsets[i]
		if off > uint64(len(data)) || 4*n > uint64(len(data))-off {
			return fmt.Errorf("gguf: tensor %q at data offset %d needs %d bytes: %w", t.Name, off, 4*n, errShort)
		}
		raw := data[off : off+4*n]
		t.Data = make([]float32, n)
		for j := range t.Data {
			t.Data[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
	}
	return nil
}

// value decodes one value of type t (a scalar or an array).
func (d *decoder) value(t ValueType) (any, error) {
	if t != TypeArray {
		return d.scalar(t)
	}
	et, err := d.u32()
	if err != nil {
		return nil, fmt.Errorf("array element type: %w", err)
	}
	n, err := d.u64()
	if err != nil {
		return nil, fmt.Errorf("array length: %w", err)
	}
	elem := ValueType(et)
	size := uint64(scalarSize(elem))
	if elem == TypeString {
		size = 8
	}
	if size == 0 {
		return nil, fmt.Errorf("array of type %d is not supported", et)
	}
	if elem == TypeBool {
		return nil, fmt.Errorf("array of bool is not supported")
	}
	if n > d.remaining()/size {
		return nil, fmt.Errorf("array of %d elements of %d bytes: %w", n, size, errShort)
	}
	switch elem {
	case TypeUint8:
		return readSlice[uint8](d, n, elem)
	case TypeInt8:
		return readSlice[int8](d, n, elem)
	case TypeUint16:
		return readSlice[uint16](d, n, elem)
	case TypeInt16:
		return readSlice[int16](d, n, elem)
	case TypeUint32:
		return readSlice[uint32](d, n, elem)
	case TypeInt32:
		return readSlice[int32](d, n, elem)
	case TypeFloat32:
		return readSlice[float32](d, n, elem)
	case TypeString:
		return readSlice[string](d, n, elem)
	case TypeUint64:
		return readSlice[uint64](d, n, elem)
	case TypeInt64:
		return readSlice[int64](d, n, elem)
	default: // TypeFloat64
		return readSlice[float64](d, n, elem)
	}
}

func readSlice[T any](d *decoder, n uint64, elem ValueType) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		v, err := d.scalar(elem)
		if err != nil {
			return nil, fmt.Errorf("array element %d: %w", i, err)
		}
		x, ok := v.(T)
		if !ok {
			return nil, fmt.Errorf("array element %d is %T", i, v)
		}
		out[i] = x
	}
	return out, nil
}

// scalar decodes one scalar of type t.
func (d *decoder) scalar(t ValueType) (any, error) {
	if t == TypeString {
		return d.str()
	}
	size := scalarSize(t)
	if size == 0 {
		return nil, fmt.Errorf("value type %d is not supported", t)
	}
	s, err := d.take(uint64(size))
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return s[0], nil
	case TypeInt8:
		return int8(s[0]), nil
	case TypeBool:
		if s[0] > 1 {
			return nil, fmt.Errorf("bool byte %d", s[0])
		}
		return s[0] == 1, nil
	case TypeUint16:
		return le.Uint16(s), nil
	case TypeInt16:
		return int16(le.Uint16(s)), nil
	case TypeUint32:
		return le.Uint32(s), nil
	case TypeInt32:
		return int32(le.Uint32(s)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(s)), nil
	case TypeUint64:
		return le.Uint64(s), nil
	case TypeInt64:
		return int64(le.Uint64(s)), nil
	default: // TypeFloat64
		return math.Float64frombits(le.Uint64(s)), nil
	}
}
