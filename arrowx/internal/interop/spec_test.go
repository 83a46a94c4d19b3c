package interop

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	amemory "github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/core"
)

// The tensors of every cell. The peers' scripts get them in the manifest (spec), and make their
// values with the same formula as value.
var (
	fixedRows        = 5
	fixedShape       = []int64{2, 3, 4}
	fixedDimNames    = []string{"C", "H", "W"}
	fixedPermutation = []int{2, 0, 1}

	variableShapes   = [][]int64{{1, 3, 2}, {2, 3, 1}, {3, 3, 4}, {2, 3, 2}}
	variableUniform  = []int64{-1, 3, -1}
	variableDimNames = []string{"C", "H", "W"}
)

// dtypes are the matrix's element types, as the cells name them.
var dtypes = []string{"float16", "float32", "float64", "int8", "int16", "int32", "int64",
	"uint8", "uint16", "uint32", "uint64", "bool8"}

// cell is one file of the matrix.
type cell struct {
	Format   string `json:"format"` // ipc_stream, ipc_file, parquet
	Kind     string `json:"kind"`   // fixed_shape, variable_shape, matrix
	DType    string `json:"dtype"`
	Nullable bool   `json:"nullable"`
	Path     string `json:"path"`
	Name     string `json:"name"` // <format>/<kind>/<dtype>/<children>
}

func (c cell) children() string {
	if c.Nullable {
		return "nullable"
	}
	return "nonnull"
}

// manifest is what a peer's script is given: the tensors' spec and the cells.
type manifest struct {
	Spec  map[string]any `json:"spec"`
	Cells []cell         `json:"cells"`
}

func spec() map[string]any {
	uniform := make([]any, len(variableUniform))
	for i, d := range variableUniform {
		if d >= 0 {
			uniform[i] = d
		}
	}
	return map[string]any{
		"fixed": map[string]any{"rows": fixedRows, "shape": fixedShape, "dim_names": fixedDimNames,
			"permutation": fixedPermutation},
		"variable": map[string]any{"shapes": variableShapes, "uniform_shape": uniform, "dim_names": variableDimNames},
		"matrix":   map[string]any{"rows": matrixRows, "cols": matrixCols},
	}
}

// The matrix cells: matrixRows rows of matrixCols plain columns.
const (
	matrixRows = 2500
	matrixCols = 3
)

// matrixDTypes are the element types of the matrix cells: plain Parquet columns, whose bool is
// Parquet's BOOLEAN.
var matrixDTypes = []string{"float16", "float32", "float64", "int8", "int16", "int32", "int64",
	"uint8", "uint16", "uint32", "uint64", "bool"}

// cells lists the cells of formats × kinds × dtypes × children, their files under dir.
func cells(dir string, formats, kinds []string, children []bool) []cell {
	var out []cell
	for _, f := range formats {
		for _, k := range kinds {
			dts := dtypes
			if k == "matrix" {
				dts = matrixDTypes
			}
			for _, dt := range dts {
				for _, n := range children {
					c := cell{Format: f, Kind: k, DType: dt, Nullable: n}
					c.Name = fmt.Sprintf("%s/%s/%s/%s", f, k, dt, c.children())
					c.Path = filepath.Join(dir, strings.ReplaceAll(c.Name, "/", "-")+ext(f))
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func ext(format string) string {
	switch format {
	case "parquet":
		return ".parquet"
	case "ipc_file":
		return ".arrow"
	}
	return ".arrows"
}

func writeManifest(t *testing.T, path string, cs []cell) {
	t.Helper()
	b, err := json.Marshal(manifest{Spec: spec(), Cells: cs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every value of every cell is value(dtype, k), k the element's index in the cell's storage
// (the physical C order of the tensors, one after the other; a matrix's in C order):
//   - bool8: 1 unless k%3 == 1;
//   - integers of w bits: (k·0x9E3779B97F4A7C15 + 12345) mod 2^w, as two's complement for the
//     signed ones (every bit pattern turns up, the extremes included);
//   - floats: ((37k) mod 101 - 50) / 8, exact in float16 too.
const (
	mulK = 0x9E3779B97F4A7C15
	addK = 12345
)

func bits(dtype string) int {
	switch dtype {
	case "int8", "uint8", "bool8", "bool":
		return 8
	case "int16", "uint16", "float16":
		return 16
	case "int32", "uint32", "float32":
		return 32
	}
	return 64
}

// valueBytes is the little-endian bytes of values k0 .. k0+n-1 of dtype.
func valueBytes(dtype string, k0, n int) []byte {
	w := bits(dtype) / 8
	out := make([]byte, n*w)
	for i := range n {
		k := uint64(k0 + i)
		var u uint64
		switch dtype {
		case "bool8", "bool":
			if k%3 != 1 {
				u = 1
			}
		case "float16", "float32", "float64":
			f := float64(int64((37*k)%101)-50) / 8
			switch dtype {
			case "float16":
				u = uint64(float16.Fromfloat32(float32(f)).Bits())
			case "float32":
				u = uint64(math.Float32bits(float32(f)))
			default:
				u = math.Float64bits(f)
			}
		default:
			u = k*mulK + addK // mod 2^64; the low w bits are the value mod 2^w
		}
		switch w {
		case 1:
			out[i] = byte(u)
		case 2:
			binary.LittleEndian.PutUint16(out[i*2:], uint16(u))
		case 4:
			binary.LittleEndian.PutUint32(out[i*4:], uint32(u))
		default:
			binary.LittleEndian.PutUint64(out[i*8:], u)
		}
	}
	return out
}

// arrowType is the Arrow type of dtype's values.
func arrowType(dtype string) arrow.DataType {
	switch dtype {
	case "float16":
		return arrow.FixedWidthTypes.Float16
	case "float32":
		return arrow.PrimitiveTypes.Float32
	case "float64":
		return arrow.PrimitiveTypes.Float64
	case "int8":
		return arrow.PrimitiveTypes.Int8
	case "int16":
		return arrow.PrimitiveTypes.Int16
	case "int32":
		return arrow.PrimitiveTypes.Int32
	case "int64":
		return arrow.PrimitiveTypes.Int64
	case "uint8":
		return arrow.PrimitiveTypes.Uint8
	case "uint16":
		return arrow.PrimitiveTypes.Uint16
	case "uint32":
		return arrow.PrimitiveTypes.Uint32
	case "uint64":
		return arrow.PrimitiveTypes.Uint64
	case "bool8":
		return extensions.NewBool8Type()
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	}
	panic("no dtype " + dtype)
}

// coreType is the tensor element type dtype's values read as.
func coreType(dtype string) core.DLDataType {
	if dtype == "bool8" || dtype == "bool" {
		return core.Bool
	}
	dt, err := arrowx.FromDType(arrowType(dtype))
	if err != nil {
		panic(err)
	}
	return dt
}

// tensorOf is a C-order tensor of shape holding values k0 onwards of dtype.
func tensorOf(t testing.TB, dtype string, k0 int, shape ...int64) *core.Tensor {
	t.Helper()
	x, err := newTensor(dtype, k0, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func newTensor(dtype string, k0 int, shape ...int64) (*core.Tensor, error) {
	x, err := core.New(coreType(dtype), shape...)
	if err != nil {
		return nil, err
	}
	b, err := x.Bytes()
	if err != nil {
		x.Release()
		return nil, err
	}
	copy(b, valueBytes(dtype, k0, int(x.Len())))
	return x, nil
}

// valuesData is the Arrow data of values k0 .. k0+n-1 of dtype.
func valuesData(dtype string, k0, n int) arrow.ArrayData {
	return array.NewData(arrowType(dtype), n, []*amemory.Buffer{nil, amemory.NewBufferBytes(valueBytes(dtype, k0, n))}, nil, 0, 0)
}

func prod(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

// fixedMeta and variableMeta are the extension metadata every cell's type has, as JSON values.
func fixedMeta() map[string]any {
	return map[string]any{"shape": fixedShape, "dim_names": fixedDimNames, "permutation": fixedPermutation}
}

func variableMeta() map[string]any {
	return map[string]any{"dim_names": variableDimNames, "uniform_shape": spec()["variable"].(map[string]any)["uniform_shape"]}
}

// sameJSON reports whether two JSON texts (or values) are the same value.
func sameJSON(a, b any) (bool, string, string) {
	norm := func(v any) string {
		var raw []byte
		if s, ok := v.(string); ok {
			raw = []byte(s)
		} else {
			raw, _ = json.Marshal(v)
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			return "invalid JSON " + string(raw)
		}
		out, _ := json.Marshal(x)
		return string(out)
	}
	x, y := norm(a), norm(b)
	return x == y, x, y
}
