package parquetx_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

var seq = arrowtest.Seq

var same = arrowtest.RequireSame

func TestRoundTrip(t *testing.T) {
	for _, dt := range []core.DLDataType{core.Int8, core.Int32, core.Int64, core.Uint16, core.Float16, core.Float32, core.Float64, core.Bool} {
		emb := seq(t, dt, 6, 4)
		cube := seq(t, dt, 6, 2, 3)
		tr, err := cube.Permute(0, 2, 1)
		require.NoError(t, err)
		ids := seq(t, dt, 6)
		var buf bytes.Buffer
		require.NoError(t, parquetx.Write(&buf, []parquetx.Column{{"emb", emb}, {"cube", tr}, {"id", ids}}), dt.String())
		for name, want := range map[string]*core.Tensor{"emb": emb, "cube": tr, "id": ids} {
			var copied bool
			got, err := parquetx.Read(bytes.NewReader(buf.Bytes()), name, adapters.ReportCopy(&copied))
			require.NoError(t, err, "%s %s", dt, name)
			same(t, want, got, fmt.Sprintf("%s %s", dt, name))
			assert.Equal(t, dt == core.Bool, copied, "%s %s: one row group decodes into one array (bools unpack)", dt, name)
			got.Release()
		}
	}
}

// writeGroups writes the tensor as a fixed_shape_tensor column in row groups of size rows.
func writeGroups(t *testing.T, x *core.Tensor, rows int64) []byte {
	t.Helper()
	ext, err := arrowx.ToFixedShapeTensor(x)
	require.NoError(t, err)
	defer ext.Release()
	et := ext.DataType().(*arrowx.FixedShapeTensorType)
	arr := ext.(array.ExtensionArray).Storage() // pqarrow writes the storage, the type in its metadata
	md := arrow.NewMetadata([]string{"ARROW:extension:name", "ARROW:extension:metadata"}, []string{et.ExtensionName(), et.Serialize()})
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arr.DataType(), Metadata: md}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	return writeRecord(t, rec, rows)
}

// writeRecord writes rec as pqarrow does, in row groups of groupRows rows, with its Arrow schema
// stored in the file's metadata.
func writeRecord(t *testing.T, rec arrow.RecordBatch, groupRows int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(groupRows)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestRowGroups(t *testing.T) {
	x := seq(t, core.Float32, 10, 3)
	file := writeGroups(t, x, 4) // groups of rows 0-3, 4-7, 8-9
	var copied bool
	got, err := parquetx.Read(bytes.NewReader(file), "x", adapters.ReportCopy(&copied))
	require.NoError(t, err)
	same(t, x, got, "all groups")
	t.Logf("three row groups read in one batch: copied=%v", copied)

	mid, err := parquetx.Read(bytes.NewReader(file), "x", parquetx.RowGroups(1))
	require.NoError(t, err)
	want, err := x.Slice(0, 4, 8, 1)
	require.NoError(t, err)
	same(t, want, mid, "row group 1")

	two, err := parquetx.Read(bytes.NewReader(file), "x", parquetx.RowGroups(2, 0))
	require.NoError(t, err)
	assert.Equal(t, []int64{6, 3}, two.Shape())

	_, err = parquetx.Read(bytes.NewReader(file), "x", parquetx.RowGroups(3))
	require.ErrorIs(t, err, core.ErrArgument)
	assert.ErrorContains(t, err, "row group 3 of a file with 3")
}

func TestReadErrors(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, parquetx.Write(&buf, []parquetx.Column{{"a", seq(t, core.Float64, 3, 2)}}))
	_, err := parquetx.Read(bytes.NewReader(buf.Bytes()), "b")
	require.ErrorIs(t, err, parquetx.ErrColumn)
	assert.ErrorContains(t, err, `column "b" is not in the file (it has [a])`)

	_, err = parquetx.Read(bytes.NewReader([]byte("PAR1 not really")), "a")
	require.Error(t, err)

	err = parquetx.Write(&buf, []parquetx.Column{{"a", seq(t, core.Float64, 3, 2)}, {"b", seq(t, core.Float64, 4)}})
	require.ErrorIs(t, err, core.ErrShape)
	require.ErrorIs(t, parquetx.Write(&buf, nil), core.ErrArgument)
	err = parquetx.Write(&buf, []parquetx.Column{{"c", core.MustFromSlice([]complex64{1, 2}, 2, 1)}})
	require.ErrorIs(t, err, adapters.ErrUnsupported)
}

func TestWriteFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.parquet")
	x := seq(t, core.Int16, 5, 2, 2)
	require.NoError(t, parquetx.WriteFile(name, []parquetx.Column{{"x", x}}))
	got, err := parquetx.ReadFile(name, "x")
	require.NoError(t, err)
	same(t, x, got, "file")
	entries, err := os.ReadDir(filepath.Dir(name))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	if err := parquetx.Write(&buf, []parquetx.Column{{"x", core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	buf.Reset()
	if err := parquetx.Write(&buf, []parquetx.Column{{"x", core.MustFromSlice([]int16{1, 2, 3})}, {"y", core.MustFromSlice([]int16{4, 5, 6})}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	// a file's claims of rows are refused past 64 MiB decoded, as a reader of untrusted files
	// would ask (MaxDecoded): what a file claims within it decodes, or fails, at once
	limit := parquetx.MaxDecoded(64 << 20)
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := parquetx.Read(bytes.NewReader(b), "x", limit)
		if err == nil {
			x.Release()
		}
		if m, err := parquetx.ReadMatrix(bytes.NewReader(b), []string{"x", "y"}, limit); err == nil {
			m.Release()
		}
		_, _ = parquetx.Describe(bytes.NewReader(b))
		ts, _ := parquetx.ReadTensors(bytes.NewReader(b), "x", limit)
		for _, t := range ts {
			t.Release()
		}
	})
}

func TestReadLeavesFileOpen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.parquet")
	require.NoError(t, parquetx.WriteFile(name, []parquetx.Column{{"x", seq(t, core.Float32, 3, 2)}}))
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	for range 2 {
		x, err := parquetx.Read(f, "x")
		require.NoError(t, err, "the file is still open for a second read")
		x.Release()
	}
}
