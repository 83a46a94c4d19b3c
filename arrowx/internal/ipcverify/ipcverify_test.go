package ipcverify_test

import (
	"encoding/base64"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx/internal/ipcverify"
)

func TestSchema(t *testing.T) {
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	plain := flight.SerializeSchema(arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64})},
	}, &md), memory.DefaultAllocator)
	dict := flight.SerializeSchema(arrow.NewSchema([]arrow.Field{
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
	}, nil), memory.DefaultAllocator)
	// a schema from a fuzzed Parquet file: its vtable's size is odd (9), so the flatbuffers runtime
	// reads the custom metadata slot, which claims 2^32 - 44 entries
	odd, err := base64.StdEncoding.DecodeString("/////6gAAAAQAAAAAAAKAAwACgAJAAQACgAAABAAAAAAAQQACAAIAAAABAAYAAAABAAAAAIAAABEAAAABAAAANT///8QAAAAEAAAAAAAAAIUAAAAAAAAAMT///8AAAABEAAAAAEAAAB5AAAAEAAUABAAAAAPAAgAAAAEABAAAAAQAAAAGAAAAAAAAAIcAAAAAAAAAAgADAAIAAcACAAAAAAAAAEQAAAAAQAAAHgAAAD/////AAAAAA==")
	require.NoError(t, err)

	require.NoError(t, ipcverify.Schema(plain, ipcverify.Policy{}))
	require.NoError(t, ipcverify.Schema(dict, ipcverify.Policy{Dictionaries: true}))
	err = ipcverify.Schema(dict, ipcverify.Policy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dictionary-encoded field")
	err = ipcverify.Schema(odd, ipcverify.Policy{Dictionaries: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "claims 4294967252 elements")
	for _, n := range []int{0, 3, 7, 12, len(plain) / 2} { // cut inside the header
		assert.Error(t, ipcverify.Schema(plain[:n], ipcverify.Policy{}), "cut at %d bytes", n)
	}
}
