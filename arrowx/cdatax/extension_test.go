package cdatax_test

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/cdatax/internal/ctest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// seq is a C-order tensor of dt of the given shape, elements 0, 1, 2, ... (mod 100; bools
// alternate).
func seq(t *testing.T, dt core.DLDataType, shape ...int64) *core.Tensor {
	t.Helper()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	f := make([]float64, n)
	for i := range f {
		f[i] = float64(i % 100)
		if dt == core.Bool {
			f[i] = float64(i % 2)
		}
	}
	out, err := memory.Cast(core.MustFromSlice(f, shape...), dt)
	require.NoError(t, err)
	return out
}

func contiguousBytes(t *testing.T, x *core.Tensor) []byte {
	t.Helper()
	c, err := memory.Contiguous(x)
	require.NoError(t, err)
	defer c.Release()
	b, err := c.ReadOnlyBytes()
	require.NoError(t, err)
	return append([]byte(nil), b...)
}

// TestFixedShapeTensorRoundTrip: a tensor exported as arrow.fixed_shape_tensor through the C
// Data Interface comes back through
// ImportArray, and through arrow-go's own importer (the extension name and metadata
// preserved), arrow-go's extension registry and arrowx.FromArray, with its shape, strides
// and values, over the same memory.
func TestFixedShapeTensorRoundTrip(t *testing.T) {
	dtypes := []core.DLDataType{core.Bool, core.Int8, core.Int16, core.Int32, core.Int64, core.Uint8, core.Uint16,
		core.Uint32, core.Uint64, core.Float16, core.Float32, core.Float64}
	for _, dt := range dtypes {
		for _, c := range []struct {
			shape []int64
			perm  []int // applied to the inner axes of a C-order tensor of shape
			meta  string
		}{
			{[]int64{5}, nil, `{"shape":[]}`},
			{[]int64{4, 3}, nil, `{"shape":[3]}`},
			{[]int64{3, 2, 4}, nil, `{"shape":[2,4]}`},
			{[]int64{3, 2, 4}, []int{0, 2, 1}, `{"shape":[2,4],"permutation":[1,0]}`},
			{[]int64{2, 2, 3, 2}, []int{0, 3, 1, 2}, `{"shape":[2,3,2],"permutation":[2,0,1]}`},
		} {
			name := fmt.Sprintf("%s%v%v", dt, c.shape, c.perm)
			t.Run(name, func(t *testing.T) {
				base := leakcheck.Settle()
				x := seq(t, dt, c.shape...)
				if c.perm != nil {
					p, err := x.Permute(c.perm...)
					require.NoError(t, err)
					x.Release()
					x = p
				}
				want := contiguousBytes(t, x)
				for _, via := range []string{"ImportArray", "cdata.ImportCArray"} {
					a, s := ctest.Alloc()
					arr, sc := (*cdata.CArrowArray)(a), (*cdata.CArrowSchema)(s)
					require.NoError(t, cdatax.ExportFixedShapeTensor(x, arr, sc))
					var back *core.Tensor
					var err error
					if via == "ImportArray" {
						back, err = cdatax.ImportArray(arr, sc)
						require.NoError(t, err)
					} else {
						// arrow-go's importer (v18.9) leaves the extension keys in the field's
						// metadata; its registry, which arrowx filled, makes the type of them
						field, col, err := cdata.ImportCArray(arr, sc)
						require.NoError(t, err)
						name, _ := field.Metadata.GetValue("ARROW:extension:name")
						meta, _ := field.Metadata.GetValue("ARROW:extension:metadata")
						assert.Equal(t, "arrow.fixed_shape_tensor", name)
						assert.JSONEq(t, c.meta, meta, "the metadata the ArrowSchema carried")
						typ, err := arrow.GetExtensionType(name).Deserialize(col.DataType(), meta)
						require.NoError(t, err)
						ft, ok := typ.(*arrowx.FixedShapeTensorType)
						require.True(t, ok, "%T", typ)
						col2 := array.NewExtensionArrayWithStorage(ft, col)
						col.Release()
						col = col2
						back, err = arrowx.FromArray(col)
						col.Release()
						require.NoError(t, err)
					}
					assert.Equal(t, x.Shape(), back.Shape(), via)
					assert.Equal(t, want, contiguousBytes(t, back), via)
					if dt != core.Bool {
						assert.Equal(t, x.Strides(), back.Strides(), "%s: a permutation comes back as strides", via)
						assert.Equal(t, x.Data(), back.Data(), "%s: zero-copy both ways", via)
					}
					back.Release()
					ctest.Free(a, s)
				}
				x.Release()
				assert.Equal(t, base, leakcheck.Settle())
			})
		}
	}
}

// TestImportFixedShapeTensorFromC: a C producer's FixedSizeList<6> of float32, its schema's
// metadata naming arrow.fixed_shape_tensor, is read as the shape the metadata gives; metadata
// that does not describe the storage, or whose encoding lies, is refused with ErrMalformed, and
// both of the producer's releases run exactly once either way.
func TestImportFixedShapeTensorFromC(t *testing.T) {
	ext := func(meta string) []byte {
		return ctest.Metadata("ARROW:extension:name", "arrow.fixed_shape_tensor", "ARROW:extension:metadata", meta)
	}
	lying := func(n, keyLen int32) []byte {
		b := ctest.Metadata("k", "v")
		*(*int32)(unsafe.Pointer(&b[0])) = n
		*(*int32)(unsafe.Pointer(&b[4])) = keyLen
		return b
	}
	for _, c := range []struct {
		name    string
		md      []byte
		shape   []int64 // the tensor's, when it is read
		strides []int64
		says    string // the error's, when refused
	}{
		{name: "no metadata", shape: []int64{2, 6}},
		{name: "other keys", md: ctest.Metadata("a", "b", "PARQUET:field_id", "3"), shape: []int64{2, 6}},
		{name: "another extension", md: ctest.Metadata("ARROW:extension:name", "arrow.opaque", "ARROW:extension:metadata", "{}"),
			shape: []int64{2, 6}},
		{name: "shape [2,3]", md: ext(`{"shape":[2,3]}`), shape: []int64{2, 2, 3}, strides: []int64{6, 3, 1}},
		{name: "permuted", md: ext(`{"shape":[2,3],"permutation":[1,0],"dim_names":["h","w"]}`), shape: []int64{2, 3, 2},
			strides: []int64{6, 1, 3}},
		{name: "shape too small", md: ext(`{"shape":[2,2]}`), says: "stored as FixedSizeList<6>, not <4>"},
		{name: "negative dimension", md: ext(`{"shape":[-2,-3]}`), says: "has dimension -2"},
		{name: "not a permutation", md: ext(`{"shape":[2,3],"permutation":[1,1]}`), says: "permutation [1 1] is not a permutation"},
		{name: "not JSON", md: ext(`{"shape":`), says: "fixed_shape_tensor metadata"},
		{name: "no extension metadata", md: ctest.Metadata("ARROW:extension:name", "arrow.fixed_shape_tensor"),
			says: "names arrow.fixed_shape_tensor but has no ARROW:extension:metadata"},
		{name: "negative count", md: lying(-1, 1), says: "metadata has -1 key-value pairs"},
		{name: "huge count", md: lying(1<<30, 1), says: "metadata has 1073741824 key-value pairs"},
		{name: "negative length", md: lying(1, -5), says: "key 0 has length -5"},
		{name: "huge length", md: lying(1, 1<<30), says: "key 0 has length 1073741824"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := leakcheck.Settle()
			arrays, schemas := ctest.ArrayReleases(), ctest.SchemaReleases()
			arr, sc, first, free := produce(0, false, 2, 6)
			defer free()
			if c.md != nil {
				ctest.SetSchemaMetadata(unsafe.Pointer(sc), 0, c.md)
			}
			ten, err := cdatax.ImportArray(arr, sc, adapters.ZeroCopyOnly())
			assert.Equal(t, schemas+1, ctest.SchemaReleases(), "the schema was released once")
			if c.says != "" {
				require.ErrorIs(t, err, arrowx.ErrMalformed)
				assert.ErrorContains(t, err, c.says)
				assert.True(t, strings.HasPrefix(err.Error(), "cdatax: ArrowSchema metadata"), err.Error())
				assert.Equal(t, arrays+1, ctest.ArrayReleases(), "a refused import releases the producer's array once")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.shape, ten.Shape())
			if c.strides != nil {
				assert.Equal(t, c.strides, ten.Strides())
			}
			assert.Equal(t, first, ten.Data(), "over the C producer's memory")
			v, err := core.At[float32](ten, 1, 0, 1)
			if len(c.shape) == 2 {
				v, err = core.At[float32](ten, 1, 1)
			}
			require.NoError(t, err)
			want := float32(7) * 0.5                   // element (1, 1) of the [2, 6] storage
			if c.strides != nil && c.strides[1] == 1 { // permuted: logical (0, 1) is physical (1, 0)
				want = float32(6+3) * 0.5
			}
			assert.Equal(t, want, v)
			ten.Release()
			assert.Equal(t, base, leakcheck.Settle())
			assert.Equal(t, arrays+1, ctest.ArrayReleases(), "the producer's release ran exactly once")
		})
	}
}

// FuzzImportFixedShapeMetadata hands ImportArray a C producer's FixedSizeList<6> of float32
// whose schema's extension metadata the fuzzer writes: it returns a tensor of 12 elements or an
// ErrMalformed, and both releases run exactly once.
func FuzzImportFixedShapeMetadata(f *testing.F) {
	f.Add("arrow.fixed_shape_tensor", `{"shape":[2,3]}`)
	f.Add("arrow.fixed_shape_tensor", `{"shape":[3,2],"permutation":[1,0],"dim_names":["a","b"]}`)
	f.Add("arrow.fixed_shape_tensor", `{"shape":[6,1,1]}`)
	f.Add("arrow.fixed_shape_tensor", `{"shape":[0]}`)
	f.Add("other", `x`)
	f.Fuzz(func(t *testing.T, name, meta string) {
		arrays, schemas := ctest.ArrayReleases(), ctest.SchemaReleases()
		arr, sc, _, free := produce(0, false, 2, 6)
		defer free()
		ctest.SetSchemaMetadata(unsafe.Pointer(sc), 0,
			ctest.Metadata("ARROW:extension:name", name, "ARROW:extension:metadata", meta))
		ten, err := cdatax.ImportArray(arr, sc)
		require.Equal(t, schemas+1, ctest.SchemaReleases())
		if err != nil {
			require.ErrorIs(t, err, arrowx.ErrMalformed)
			require.Equal(t, arrays+1, ctest.ArrayReleases())
			return
		}
		require.Equal(t, int64(12), ten.Len())
		require.Equal(t, int64(2), ten.Dim(0))
		ten.Release()
		leakcheck.Settle()
		require.Equal(t, arrays+1, ctest.ArrayReleases())
	})
}
