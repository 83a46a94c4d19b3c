package parquetx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// TestHostileFiles: files of a few hundred bytes (found by FuzzRead) whose footers make
// arrow-go's reader allocate what they claim, from 4 GiB that no data backs to 128 GiB that end
// the process, are refused before it reads them.
func TestHostileFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		want error
		msg  string
	}{
		{"arrow_schema_fields", arrowx.ErrMalformed, "ARROW:schema metadata"},     // a field claims 2^32 children
		{"arrow_schema_odd_vtable", arrowx.ErrMalformed, "ARROW:schema metadata"}, // metadata behind an odd vtable size
		{"schema_children", arrowx.ErrMalformed, "claims"},                        // a schema element claims 2^31 children
		{"rows_beyond_memory", core.ErrTooLarge, "bytes for: core: "},             // 30 billion rows, past any machine's memory
		{"rows_unbacked", core.ErrTooLarge, "parquetx.MaxDecoded"},                // 2^30 rows that no data backs
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "hostile", tc.file+".parquet"))
			require.NoError(t, err)
			defer f.Close()
			opts := []adapters.Option{parquetx.MaxDecoded(64 << 20)}
			if tc.file == "rows_beyond_memory" {
				opts = nil // refused by the machine's memory, without a cap
			}
			_, err = parquetx.Read(f, "x", opts...)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestMaxDecoded: a read whose rows pass the cap fails before it decodes; one within it reads.
func TestMaxDecoded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	require.NoError(t, parquetx.WriteFile(path, []parquetx.Column{
		{Name: "x", Tensor: core.MustFromSlice(make([]float32, 4096), 1024, 4)},
		{Name: "id", Tensor: core.MustFromSlice(make([]int64, 1024))},
	}))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = parquetx.Read(f, "x", parquetx.MaxDecoded(16<<10))
	require.ErrorIs(t, err, core.ErrTooLarge)
	assert.Contains(t, err.Error(), `parquetx: column "x": the file claims 1024 rows of at least 32 bytes`)
	_, err = parquetx.ReadMatrix(f, []string{"id", "id"}, parquetx.MaxDecoded(8<<10))
	require.ErrorIs(t, err, core.ErrTooLarge)
	assert.Contains(t, err.Error(), "parquetx: the matrix: the file claims 1024 rows of at least 16 bytes")
	x, err := parquetx.Read(f, "x", parquetx.MaxDecoded(64<<10))
	require.NoError(t, err)
	assert.Equal(t, []int64{1024, 4}, x.Shape())
	x.Release()
}
