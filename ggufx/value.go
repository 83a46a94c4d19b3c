package ggufx

import (
	"fmt"
	"iter"
	"slices"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ValueType is the type of a metadata value (enum gguf_type).
type ValueType uint32

// The metadata value types.
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

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// valueSizes are the bytes of a scalar of each type on disk (0: string and array, of varying size).
var valueSizes = [...]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// Known reports whether v is one of the thirteen value types.
func (v ValueType) Known() bool { return int(v) < len(valueTypeNames) }

// String names the type ("uint32", "string", "array", ...).
func (v ValueType) String() string {
	if v.Known() {
		return valueTypeNames[v]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(v))
}

// Value is one metadata value: a scalar (uint8 ... float64, bool, string) or an array of
// values of one type, arrays of arrays included. Its Go value (Any) is the scalar of the
// matching Go type, a slice of such ([]uint32, []string, ...) for arrays of scalars, or a
// []Value for arrays of arrays. The zero Value is the uint8 0.
type Value struct {
	typ  ValueType
	elem ValueType // arrays: the elements' type
	v    any
}

// ValueOf makes a Value of a Go value: uint8, int8, uint16, int16, uint32, int32, float32,
// bool, string, uint64, int64, float64, a slice of one of those (an array), a []Value whose
// elements are all of one type (an array of arrays, or of scalars), or a Value. Other types
// (int, uint, maps, ...) are refused with ErrValueType: GGUF has no type for them, or only one
// whose width the caller must choose.
func ValueOf(x any) (Value, error) {
	switch x := x.(type) {
	case Value:
		if x.v == nil { // the zero Value
			return Value{typ: TypeUint8, v: uint8(0)}, nil
		}
		return x, nil
	case uint8:
		return Value{typ: TypeUint8, v: x}, nil
	case int8:
		return Value{typ: TypeInt8, v: x}, nil
	case uint16:
		return Value{typ: TypeUint16, v: x}, nil
	case int16:
		return Value{typ: TypeInt16, v: x}, nil
	case uint32:
		return Value{typ: TypeUint32, v: x}, nil
	case int32:
		return Value{typ: TypeInt32, v: x}, nil
	case float32:
		return Value{typ: TypeFloat32, v: x}, nil
	case bool:
		return Value{typ: TypeBool, v: x}, nil
	case string:
		return Value{typ: TypeString, v: x}, nil
	case uint64:
		return Value{typ: TypeUint64, v: x}, nil
	case int64:
		return Value{typ: TypeInt64, v: x}, nil
	case float64:
		return Value{typ: TypeFloat64, v: x}, nil
	case []uint8:
		return arr(TypeUint8, slices.Clone(x)), nil
	case []int8:
		return arr(TypeInt8, slices.Clone(x)), nil
	case []uint16:
		return arr(TypeUint16, slices.Clone(x)), nil
	case []int16:
		return arr(TypeInt16, slices.Clone(x)), nil
	case []uint32:
		return arr(TypeUint32, slices.Clone(x)), nil
	case []int32:
		return arr(TypeInt32, slices.Clone(x)), nil
	case []float32:
		return arr(TypeFloat32, slices.Clone(x)), nil
	case []bool:
		return arr(TypeBool, slices.Clone(x)), nil
	case []string:
		return arr(TypeString, slices.Clone(x)), nil
	case []uint64:
		return arr(TypeUint64, slices.Clone(x)), nil
	case []int64:
		return arr(TypeInt64, slices.Clone(x)), nil
	case []float64:
		return arr(TypeFloat64, slices.Clone(x)), nil
	case []Value:
		return arrayOfValues(x)
	}
	return Value{}, errs.Errorf(ErrValueType, "ggufx: GGUF has no value type for Go's %T", x)
}

func arr(elem ValueType, v any) Value { return Value{typ: TypeArray, elem: elem, v: v} }

// arrayOfValues makes an array of xs, all of one type: an array of arrays stays a []Value,
// one of scalars becomes the typed slice.
func arrayOfValues(xs []Value) (Value, error) {
	if len(xs) == 0 {
		return Value{}, errs.Errorf(ErrValueType, "ggufx: an empty []Value has no element type (use a typed empty slice)")
	}
	t := xs[0].typ
	for i, x := range xs {
		if x.typ != t {
			return Value{}, errs.Errorf(ErrValueType, "ggufx: array element %d is %s, element 0 is %s (GGUF arrays hold one type)", i, x.typ, t)
		}
	}
	if t == TypeArray {
		if d := depthOf(xs[0]) + 1; d > MaxDepth {
			return Value{}, errs.Errorf(ErrValueType, "ggufx: arrays nested %d deep, over %d", d, MaxDepth)
		}
		return arr(TypeArray, slices.Clone(xs)), nil
	}
	switch t {
	case TypeUint8:
		return arr(t, collect[uint8](xs)), nil
	case TypeInt8:
		return arr(t, collect[int8](xs)), nil
	case TypeUint16:
		return arr(t, collect[uint16](xs)), nil
	case TypeInt16:
		return arr(t, collect[int16](xs)), nil
	case TypeUint32:
		return arr(t, collect[uint32](xs)), nil
	case TypeInt32:
		return arr(t, collect[int32](xs)), nil
	case TypeFloat32:
		return arr(t, collect[float32](xs)), nil
	case TypeBool:
		return arr(t, collect[bool](xs)), nil
	case TypeString:
		return arr(t, collect[string](xs)), nil
	case TypeUint64:
		return arr(t, collect[uint64](xs)), nil
	case TypeInt64:
		return arr(t, collect[int64](xs)), nil
	default:
		return arr(t, collect[float64](xs)), nil
	}
}

func depthOf(v Value) int {
	if v.typ != TypeArray {
		return 0
	}
	if vs, ok := v.v.([]Value); ok && len(vs) > 0 {
		return 1 + depthOf(vs[0])
	}
	return 1
}

func collect[T any](xs []Value) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = x.v.(T)
	}
	return out
}

// MustValueOf is ValueOf that panics on an error, for literals.
func MustValueOf(x any) Value {
	v, err := ValueOf(x)
	if err != nil {
		panic(err)
	}
	return v
}

// Type is the value's type (TypeArray for arrays).
func (v Value) Type() ValueType { return v.typ }

// ElemType is the type of an array's elements (TypeArray for arrays of arrays); for scalars it
// is meaningless (0).
func (v Value) ElemType() ValueType { return v.elem }

// Any returns the Go value: a scalar, a typed slice for arrays of scalars, a []Value for arrays
// of arrays. Slices are shared: do not modify them.
func (v Value) Any() any {
	if v.v == nil { // the zero Value
		return uint8(0)
	}
	return v.v
}

// Len is the number of elements of an array (0 for scalars).
func (v Value) Len() int {
	switch x := v.v.(type) {
	case []uint8:
		return len(x)
	case []int8:
		return len(x)
	case []uint16:
		return len(x)
	case []int16:
		return len(x)
	case []uint32:
		return len(x)
	case []int32:
		return len(x)
	case []float32:
		return len(x)
	case []bool:
		return len(x)
	case []string:
		return len(x)
	case []uint64:
		return len(x)
	case []int64:
		return len(x)
	case []float64:
		return len(x)
	case []Value:
		return len(x)
	}
	return 0
}

// Index returns element i of an array as a Value; ok is false for scalars and i out of range.
func (v Value) Index(i int) (Value, bool) {
	if v.typ != TypeArray || i < 0 || i >= v.Len() {
		return Value{}, false
	}
	if vs, ok := v.v.([]Value); ok {
		return vs[i], true
	}
	return elemAt(v.v, i), true
}

func elemAt(s any, i int) Value {
	var x any
	switch s := s.(type) {
	case []uint8:
		x = s[i]
	case []int8:
		x = s[i]
	case []uint16:
		x = s[i]
	case []int16:
		x = s[i]
	case []uint32:
		x = s[i]
	case []int32:
		x = s[i]
	case []float32:
		x = s[i]
	case []bool:
		x = s[i]
	case []string:
		x = s[i]
	case []uint64:
		x = s[i]
	case []int64:
		x = s[i]
	case []float64:
		x = s[i]
	}
	r, _ := ValueOf(x)
	return r
}

// String formats the value for people: scalars as Go prints them, strings quoted, arrays as
// their element type and length with their first elements.
func (v Value) String() string {
	switch v.typ {
	case TypeString:
		return fmt.Sprintf("%q", v.v)
	case TypeArray:
		n := v.Len()
		s := fmt.Sprintf("[%d]%s{", n, v.elem)
		for i := range min(n, 4) {
			e, _ := v.Index(i)
			if i > 0 {
				s += " "
			}
			s += e.String()
		}
		if n > 4 {
			s += " ..."
		}
		return s + "}"
	}
	return fmt.Sprint(v.Any())
}

// KV is one metadata key and its value.
type KV struct {
	Key   string
	Value Value
}

// Metadata is a GGUF file's metadata: keys and typed values, in file order, each key once.
// The zero Metadata is empty and ready to use. Typed getters (String, Uint32, ...) fail with
// ErrNotFound for a missing key and ErrValueType for a value of another type, naming both.
type Metadata struct {
	kvs   []KV
	index map[string]int
}

// Len is the number of keys.
func (m *Metadata) Len() int { return len(m.kvs) }

// Keys returns the keys in file order.
func (m *Metadata) Keys() []string {
	out := make([]string, len(m.kvs))
	for i, kv := range m.kvs {
		out[i] = kv.Key
	}
	return out
}

// All iterates over the keys and values in file order.
func (m *Metadata) All() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		for _, kv := range m.kvs {
			if !yield(kv.Key, kv.Value) {
				return
			}
		}
	}
}

// Get returns the value of key, and whether there is one.
func (m *Metadata) Get(key string) (Value, bool) {
	i, ok := m.index[key]
	if !ok {
		return Value{}, false
	}
	return m.kvs[i].Value, true
}

// Set sets key to x (converted by ValueOf), replacing its value if it has one (in place) or
// adding it at the end.
func (m *Metadata) Set(key string, x any) error {
	if key == "" {
		return errs.Errorf(ErrName, "ggufx: a metadata key may not be empty")
	}
	v, err := ValueOf(x)
	if err != nil {
		return fmt.Errorf("%w (metadata %q)", err, key)
	}
	m.set(key, v)
	return nil
}

func (m *Metadata) set(key string, v Value) {
	if i, ok := m.index[key]; ok {
		m.kvs[i].Value = v
		return
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	m.index[key] = len(m.kvs)
	m.kvs = append(m.kvs, KV{key, v})
}

// Delete removes key, if present.
func (m *Metadata) Delete(key string) {
	i, ok := m.index[key]
	if !ok {
		return
	}
	m.kvs = slices.Delete(m.kvs, i, i+1)
	delete(m.index, key)
	for j := i; j < len(m.kvs); j++ {
		m.index[m.kvs[j].Key] = j
	}
}

func get[T any](m *Metadata, key string, want ValueType, elem ValueType) (T, error) {
	var z T
	v, ok := m.Get(key)
	if !ok {
		return z, errs.Errorf(ErrNotFound, "ggufx: no metadata key %q", key)
	}
	x, ok := v.v.(T)
	if !ok || v.typ != want || (want == TypeArray && v.elem != elem) {
		what := want.String()
		if want == TypeArray {
			what = "an array of " + elem.String()
		}
		got := v.typ.String()
		if v.typ == TypeArray {
			got = "an array of " + v.elem.String()
		}
		return z, errs.Errorf(ErrValueType, "ggufx: metadata %q is %s, not %s", key, got, what)
	}
	return x, nil
}

// String returns the string value of key.
func (m *Metadata) String(key string) (string, error) { return get[string](m, key, TypeString, 0) }

// Bool returns the bool value of key.
func (m *Metadata) Bool(key string) (bool, error) { return get[bool](m, key, TypeBool, 0) }

// Uint8 returns the uint8 value of key.
func (m *Metadata) Uint8(key string) (uint8, error) { return get[uint8](m, key, TypeUint8, 0) }

// Int8 returns the int8 value of key.
func (m *Metadata) Int8(key string) (int8, error) { return get[int8](m, key, TypeInt8, 0) }

// Uint16 returns the uint16 value of key.
func (m *Metadata) Uint16(key string) (uint16, error) { return get[uint16](m, key, TypeUint16, 0) }

// Int16 returns the int16 value of key.
func (m *Metadata) Int16(key string) (int16, error) { return get[int16](m, key, TypeInt16, 0) }

// Uint32 returns the uint32 value of key.
func (m *Metadata) Uint32(key string) (uint32, error) { return get[uint32](m, key, TypeUint32, 0) }

// Int32 returns the int32 value of key.
func (m *Metadata) Int32(key string) (int32, error) { return get[int32](m, key, TypeInt32, 0) }

// Uint64 returns the uint64 value of key.
func (m *Metadata) Uint64(key string) (uint64, error) { return get[uint64](m, key, TypeUint64, 0) }

// Int64 returns the int64 value of key.
func (m *Metadata) Int64(key string) (int64, error) { return get[int64](m, key, TypeInt64, 0) }

// Float32 returns the float32 value of key.
func (m *Metadata) Float32(key string) (float32, error) {
	return get[float32](m, key, TypeFloat32, 0)
}

// Float64 returns the float64 value of key.
func (m *Metadata) Float64(key string) (float64, error) {
	return get[float64](m, key, TypeFloat64, 0)
}

// Strings returns the array of strings of key (shared: do not modify it).
func (m *Metadata) Strings(key string) ([]string, error) {
	return get[[]string](m, key, TypeArray, TypeString)
}

// Int32s returns the array of int32 of key (shared: do not modify it).
func (m *Metadata) Int32s(key string) ([]int32, error) {
	return get[[]int32](m, key, TypeArray, TypeInt32)
}

// Uint32s returns the array of uint32 of key (shared: do not modify it).
func (m *Metadata) Uint32s(key string) ([]uint32, error) {
	return get[[]uint32](m, key, TypeArray, TypeUint32)
}

// Float32s returns the array of float32 of key (shared: do not modify it).
func (m *Metadata) Float32s(key string) ([]float32, error) {
	return get[[]float32](m, key, TypeArray, TypeFloat32)
}

// Int64s returns the array of int64 of key (shared: do not modify it).
func (m *Metadata) Int64s(key string) ([]int64, error) {
	return get[[]int64](m, key, TypeArray, TypeInt64)
}

// Arrays returns the array of arrays of key (shared: do not modify it).
func (m *Metadata) Arrays(key string) ([]Value, error) {
	return get[[]Value](m, key, TypeArray, TypeArray)
}
