package gguf

import (
	"fmt"
	"math"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the GGUF version this package writes and reads.
const Version = 3

// DefaultAlignment is the tensor-data alignment in bytes when the file has no
// general.alignment key.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

// The metadata value types of GGUF v3.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

// TensorType is a ggml tensor element type.
type TensorType uint32

// TensorF32 is the only tensor type this package writes: 32-bit floats.
const TensorF32 TensorType = 0

// KV is one metadata entry. Value holds one of the Go types this package maps
// to GGUF: uint8, int8, uint16, int16, uint32, int32, float32, bool, string,
// uint64, int64, float64, or a slice of one of them except bool
// ([]uint8, []int32, []float32, []string, ...).
type KV struct {
	Key   string
	Value any
}

// Tensor is one tensor. Dims lists ne0 first: ne0 is the length of a row, the
// contiguous axis, so element (i0, i1) of a matrix is Data[i1*Dims[0]+i0].
type Tensor struct {
	Name string
	Dims []uint64
	Data []float32
}

// Elements is the product of the tensor's dims.
func (t Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a whole GGUF file: metadata in order, then tensors in order.
type File struct {
	KVs     []KV
	Tensors []Tensor
}

// Get returns the value of key and whether it is present.
func (f *File) Get(key string) (any, bool) {
	for _, kv := range f.KVs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the tensor named name and whether it is present.
func (f *File) Tensor(name string) (Tensor, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// Alignment is the file's tensor-data alignment: general.alignment when set
// (a uint32 power of two), else DefaultAlignment.
func (f *File) Alignment() (uint64, error) {
	v, ok := f.Get("general.alignment")
	if !ok {
		return DefaultAlignment, nil
	}
	a, ok := v.(uint32)
	if !ok {
		return 0, fmt.Errorf("gguf: general.alignment is %T, want uint32", v)
	}
	if a == 0 || a&(a-1) != 0 {
		return 0, fmt.Errorf("gguf: general.alignment %d is not a power of two", a)
	}
	return uint64(a), nil
}

// valueType is the GGUF type of a scalar Go value, or TypeArray and the
// element type for a slice.
func valueType(v any) (t ValueType, elem ValueType, err error) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, nil
	case int8:
		return TypeInt8, 0, nil
	case uint16:
		return TypeUint16, 0, nil
	case int16:
		return TypeInt16, 0, nil
	case uint32:
		return TypeUint32, 0, nil
	case int32:
		return TypeInt32, 0, nil
	case float32:
		return TypeFloat32, 0, nil
	case bool:
		return TypeBool, 0, nil
	case string:
		return TypeString, 0, nil
	case uint64:
		return TypeUint64, 0, nil
	case int64:
		return TypeInt64, 0, nil
	case float64:
		return TypeFloat64, 0, nil
	case []uint8:
		return TypeArray, TypeUint8, nil
	case []int8:
		return TypeArray, TypeInt8, nil
	case []uint16:
		return TypeArray, TypeUint16, nil
	case []int16:
		return TypeArray, TypeInt16, nil
	case []uint32:
		return TypeArray, TypeUint32, nil
	case []int32:
		return TypeArray, TypeInt32, nil
	case []float32:
		return TypeArray, TypeFloat32, nil
	case []string:
		return TypeArray, TypeString, nil
	case []uint64:
		return TypeArray, TypeUint64, nil
	case []int64:
		return TypeArray, TypeInt64, nil
	case []float64:
		return TypeArray, TypeFloat64, nil
	}
	return 0, 0, fmt.Errorf("unsupported value type %T", v)
}

// scalarSize is the encoded size of a fixed-size scalar type, 0 for strings.
func scalarSize(t ValueType) int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// alignUp rounds n up to a multiple of a (a power of two).
func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// dataLayout returns each tensor's offset in the data section and the
// section's size, after checking names, dims and data lengths.
func (f *File) dataLayout(align uint64) ([]uint64, uint64, error) {
	offsets := make([]uint64, len(f.Tensors))
	seen := make(map[string]bool, len(f.Tensors))
	var off uint64
	for i, t := range f.Tensors {
		if t.Name == "" {
			return nil, 0, fmt.Errorf("gguf: tensor %d has no name", i)
		}
		if seen[t.Name] {
			return nil, 0, fmt.Errorf("gguf: tensor %q appears twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.Dims) == 0 || len(t.Dims) > 4 {
			return nil, 0, fmt.Errorf("gguf: tensor %q has %d dims, want 1 to 4", t.Name, len(t.Dims))
		}
		n := uint64(1)
		for _, d := range t.Dims {
			if d == 0 || d > math.MaxUint32 {
				return nil, 0, fmt.Errorf("gguf: tensor %q has dim %d", t.Name, d)
			}
			n *= d
		}
		if n != uint64(len(t.Data)) {
			return nil, 0, fmt.Errorf("gguf: tensor %q has %d values, its dims %v want %d", t.Name, len(t.Data), t.Dims, n)
		}
		off = alignUp(off, align)
		offsets[i] = off
		off += 4 * n
	}
	return offsets, off, nil
}
