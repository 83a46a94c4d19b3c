package parquetx

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// withBool8 returns schema with the top-level int8 columns that the file's stored Arrow schema
// (ARROW:schema) calls arrow.bool8 typed so: pqarrow restores an extension type from the stored
// schema only over nested storage, and reads a bool8 column back as plain int8. A stored
// schema that does not parse changes nothing (pqarrow itself reports it where it matters).
func withBool8(fr *file.Reader, schema *arrow.Schema) *arrow.Schema {
	_, raw, ok := storedSchema(fr)
	if !ok {
		return schema
	}
	rd, err := ipc.NewReader(bytes.NewReader(raw))
	if err != nil {
		return schema
	}
	defer rd.Release()
	stored := rd.Schema()
	fields := schema.Fields()
	changed := false
	for i, f := range fields {
		if f.Type.ID() != arrow.INT8 {
			continue
		}
		if idx := stored.FieldIndices(f.Name); len(idx) == 1 {
			if _, ok := stored.Field(idx[0]).Type.(*extensions.Bool8Type); ok {
				fields[i].Type, changed = extensions.NewBool8Type(), true
			}
		}
	}
	if !changed {
		return schema
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// asBool8 gives the chunks of a column typed int8 by the reader as arrow.bool8 arrays when the
// schema says bool8 (withBool8); otherwise it returns them unchanged.
func asBool8(chunks *arrow.Chunked, want arrow.DataType) *arrow.Chunked {
	bt, ok := want.(*extensions.Bool8Type)
	if !ok || chunks.DataType().ID() != arrow.INT8 {
		return chunks
	}
	parts := make([]arrow.Array, len(chunks.Chunks()))
	for i, c := range chunks.Chunks() {
		parts[i] = array.NewExtensionArrayWithStorage(bt, c)
	}
	out := arrow.NewChunked(bt, parts)
	for _, p := range parts {
		p.Release()
	}
	chunks.Release()
	return out
}
