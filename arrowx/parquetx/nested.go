package parquetx

import (
	"bytes"
	"encoding/base64"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// nestedTypes maps the top-level columns whose stored Arrow type is an extension type with
// extension types inside its storage (arrow.fixed_shape_tensor of arrow.bool8 values) to that
// type. arrow-go's Parquet reader (pqarrow, v18.9) restores an extension type nested in a list
// only when something else about it changed, so it reads such a storage as List<int8> and then
// refuses the column's extension type ("mismatch storage type"): parquetx hands it a stored
// schema whose nested extension types are their storage (unnest), and gives the decoded columns
// their stored types back (retype), over the same buffers.
type nestedTypes map[string]arrow.DataType

// unnest rewrites a file's stored Arrow schema (*v, the ARROW:schema value in the reader's own
// copy of the footer; raw, its decoded message: see storedSchema) with the extension types
// nested in a column's extension type replaced by their storage, and returns the columns it
// changed. A stored schema that does not parse, or has no such column, is left as it is
// (pqarrow reports what it cannot read).
func unnest(v *string, raw []byte) nestedTypes {
	rd, err := ipc.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	stored := rd.Schema()
	rd.Release()
	fields := stored.Fields()
	var nested nestedTypes
	for i, f := range fields {
		et, ok := f.Type.(arrow.ExtensionType)
		if !ok || !hasExtension(et.StorageType()) {
			continue
		}
		plain, err := et.Deserialize(storageOnly(et.StorageType()), et.Serialize())
		if err != nil {
			continue
		}
		if nested == nil {
			nested = nestedTypes{}
		}
		nested[f.Name], fields[i].Type = f.Type, plain
	}
	if nested == nil {
		return nil
	}
	md := stored.Metadata()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(arrow.NewSchema(fields, &md)))
	if err := w.Close(); err != nil {
		return nil
	}
	*v = base64.StdEncoding.EncodeToString(buf.Bytes())
	return nested
}

// hasExtension reports whether dt holds an extension type below its top level.
func hasExtension(dt arrow.DataType) bool {
	if n, ok := dt.(arrow.NestedType); ok {
		for _, f := range n.Fields() {
			if _, ok := f.Type.(arrow.ExtensionType); ok || hasExtension(f.Type) {
				return true
			}
		}
	}
	return false
}

// storageOnly is dt with every extension type in it replaced by its storage.
func storageOnly(dt arrow.DataType) arrow.DataType {
	if et, ok := dt.(arrow.ExtensionType); ok {
		return storageOnly(et.StorageType())
	}
	plain := func(f arrow.Field) arrow.Field {
		f.Type = storageOnly(f.Type)
		return f
	}
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), plain(t.ElemField()))
	case *arrow.ListType:
		return arrow.ListOfField(plain(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(plain(t.ElemField()))
	case *arrow.StructType:
		fields := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			fields[i] = plain(f)
		}
		return arrow.StructOf(fields...)
	}
	return dt
}

// apply gives the schema's columns that unnest changed their stored types.
func (n nestedTypes) apply(s *arrow.Schema) *arrow.Schema {
	if len(n) == 0 {
		return s
	}
	fields := s.Fields()
	for i, f := range fields {
		if t, ok := n[f.Name]; ok {
			fields[i].Type = t
		}
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// retype gives a column's decoded chunks the type want (its stored type, see nestedTypes) when
// they have another, over the same buffers; the chunks are released.
func retype(chunks *arrow.Chunked, want arrow.DataType) *arrow.Chunked {
	if arrow.TypeEqual(chunks.DataType(), want) || !arrow.TypeEqual(storageOnly(chunks.DataType()), storageOnly(want)) {
		return chunks
	}
	parts := make([]arrow.Array, len(chunks.Chunks()))
	for i, c := range chunks.Chunks() {
		d := retypeData(c.Data(), want)
		parts[i] = array.MakeFromData(d)
		d.Release()
	}
	out := arrow.NewChunked(want, parts)
	for _, p := range parts {
		p.Release()
	}
	chunks.Release()
	return out
}

// retypeData is d (of a type whose storage is want's) typed want, children and all.
func retypeData(d arrow.ArrayData, want arrow.DataType) arrow.ArrayData {
	st := want
	if et, ok := want.(arrow.ExtensionType); ok {
		st = et.StorageType()
	}
	children := d.Children()
	if n, ok := st.(arrow.NestedType); ok && len(n.Fields()) == len(children) {
		typed := make([]arrow.ArrayData, len(children))
		for i, f := range n.Fields() {
			typed[i] = retypeData(children[i], f.Type)
			defer typed[i].Release()
		}
		children = typed
	}
	return array.NewData(want, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}
