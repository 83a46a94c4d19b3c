// Package ipcverify checks the flatbuffer headers of Arrow IPC messages before arrow-go reads them.
//
// arrow-go's IPC reader trusts the vector lengths of the headers it parses: a schema message
// claiming 2^32 metadata entries or fields makes it allocate that many, which no recover can
// catch (the runtime throws "out of memory"), and deep nesting is recursion without bound. So
// every header from outside (the network: flightx; a Parquet file's ARROW:schema: parquetx) goes
// through Header first: a small flatbuffer walk, with bounds checks on every read, of exactly
// the tables the reader allocates from. It checks that every vector fits in the message (a
// vector of n offsets takes 4n bytes, so no length can exceed the message's own size), that
// nesting is at most maxDepth, and that the message is a schema or an uncompressed record batch
// (a compressed body makes the reader allocate what its first 8 bytes claim).
package ipcverify

import (
	"encoding/binary"
	"fmt"
)

// Policy is what a caller accepts beyond a plain schema.
type Policy struct {
	// Batches accepts record batch messages (uncompressed), as in a stream.
	Batches bool
	// Dictionaries accepts dictionary-encoded fields (a Parquet file's schema may have them; a
	// tensor stream has none).
	Dictionaries bool
}

const (
	maxDepth  = 64      // nested fields
	maxFields = 1 << 16 // fields visited in one schema
)

// Flatbuffer slots (vtable entries) of the Arrow IPC schema (Message.fbs, Schema.fbs).
const (
	msgHeaderType     = 1
	msgHeader         = 2
	msgBodyLength     = 3
	msgCustomMetadata = 4
	schemaFields      = 1
	schemaCustomMeta  = 2
	schemaFeatures    = 3
	fieldTypeType     = 2
	fieldType         = 3
	fieldDictionary   = 4
	fieldChildren     = 5
	fieldCustomMeta   = 6
	unionTypeIDs      = 1
	rbNodes           = 1
	rbBuffers         = 2
	rbCompression     = 3
	rbVariadic        = 4
	headerSchema      = 1
	headerRecordBatch = 3
	typeUnion         = 14
)

type fbuf []byte

func (b fbuf) u32(p int) (int, bool) {
	if p < 0 || p > len(b)-4 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(b[p:])), true
}

func (b fbuf) u16(p int) (int, bool) {
	if p < 0 || p > len(b)-2 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint16(b[p:])), true
}

func (b fbuf) u8(p int) (int, bool) {
	if p < 0 || p >= len(b) {
		return 0, false
	}
	return int(b[p]), true
}

// table is a flatbuffer table at pos with its vtable at vt.
type table struct {
	b       fbuf
	pos, vt int
}

func (b fbuf) table(pos int) (table, error) {
	so, ok := b.u32(pos)
	if !ok {
		return table{}, fmt.Errorf("table at %d outside the header", pos)
	}
	vt := pos - int(int32(uint32(so)))
	if _, ok := b.u16(vt); !ok {
		return table{}, fmt.Errorf("vtable at %d outside the header", vt)
	}
	return table{b: b, pos: pos, vt: vt}, nil
}

// field returns the absolute position of slot's value, or 0 if absent. A slot is present as
// the flatbuffers runtime reads it: when its entry starts inside the vtable's stated size,
// even if it does not end there (an odd size).
func (t table) field(slot int) (int, error) {
	vsize, _ := t.b.u16(t.vt)
	o := 4 + 2*slot
	if o >= vsize {
		return 0, nil
	}
	off, ok := t.b.u16(t.vt + o)
	if !ok {
		return 0, fmt.Errorf("vtable entry %d outside the header", slot)
	}
	if off == 0 {
		return 0, nil
	}
	return t.pos + off, nil
}

// ref follows the offset stored at p (to a table, vector or string).
func (t table) ref(p int) (int, error) {
	o, ok := t.b.u32(p)
	if !ok {
		return 0, fmt.Errorf("offset at %d outside the header", p)
	}
	return p + o, nil
}

// vector returns the start and length of the vector in slot, checking that n elements of elem
// bytes fit; a missing vector has length 0.
func (t table) vector(slot, elem int) (start, n int, err error) {
	p, err := t.field(slot)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	v, err := t.ref(p)
	if err != nil {
		return 0, 0, err
	}
	n, ok := t.b.u32(v)
	if !ok || n > (len(t.b)-v-4)/elem {
		return 0, 0, fmt.Errorf("vector in slot %d claims %d elements, the header has %d bytes", slot, n, len(t.b))
	}
	return v + 4, n, nil
}

// subTable returns the table that slot refers to (ok false if absent).
func (t table) subTable(slot int) (table, bool, error) {
	p, err := t.field(slot)
	if err != nil || p == 0 {
		return table{}, false, err
	}
	at, err := t.ref(p)
	if err != nil {
		return table{}, false, err
	}
	s, err := t.b.table(at)
	return s, err == nil, err
}

// tables checks a vector of tables in slot and returns them.
func (t table) tables(slot int) ([]table, error) {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return nil, err
	}
	out := make([]table, 0, min(n, 64))
	for i := range n {
		at, err := t.ref(start + 4*i)
		if err != nil {
			return nil, err
		}
		s, err := t.b.table(at)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Header checks h, the flatbuffer header of an IPC message whose body is maxBody bytes (an IPC
// reader over a byte stream allocates what the header claims), before arrow-go reads it. The
// message must be a schema, or, where p allows them, an uncompressed record batch.
func Header(h []byte, maxBody int, p Policy) error {
	if len(h) == 0 {
		return nil
	}
	b := fbuf(h)
	root, ok := b.u32(0)
	if !ok {
		return fmt.Errorf("IPC message header of %d bytes is too short", len(h))
	}
	msg, err := b.table(root)
	if err != nil {
		return fmt.Errorf("unreadable IPC message: %v", err)
	}
	if _, err := msg.tables(msgCustomMetadata); err != nil {
		return fmt.Errorf("unreadable IPC message metadata: %v", err)
	}
	if p, err := msg.field(msgBodyLength); err != nil {
		return fmt.Errorf("unreadable IPC message: %v", err)
	} else if p != 0 {
		lo, ok1 := b.u32(p)
		hi, ok2 := b.u32(p + 4)
		if !ok1 || !ok2 || hi != 0 || lo > maxBody {
			return fmt.Errorf("IPC message claims a body of %d bytes, %d came", uint64(hi)<<32|uint64(lo), maxBody)
		}
	}
	tp, err := msg.field(msgHeaderType)
	if err != nil {
		return fmt.Errorf("unreadable IPC message: %v", err)
	}
	kind, _ := b.u8(tp)
	hdr, ok, err := msg.subTable(msgHeader)
	if err != nil || !ok {
		return fmt.Errorf("IPC message without a header (%v)", err)
	}
	switch kind {
	case headerSchema:
		if _, err := hdr.tables(schemaCustomMeta); err != nil {
			return fmt.Errorf("unreadable schema metadata: %v", err)
		}
		if _, _, err := hdr.vector(schemaFeatures, 8); err != nil {
			return fmt.Errorf("unreadable schema features: %v", err)
		}
		fields, err := hdr.tables(schemaFields)
		if err != nil {
			return fmt.Errorf("unreadable schema fields: %v", err)
		}
		count := 0
		for _, f := range fields {
			if err := verifyField(f, 1, &count, p); err != nil {
				return fmt.Errorf("unreadable schema field: %v", err)
			}
		}
	case headerRecordBatch:
		if !p.Batches {
			return fmt.Errorf("IPC message of type %d where a schema belongs", kind)
		}
		if p, _ := hdr.field(rbCompression); p != 0 {
			return fmt.Errorf("compressed record batch (its body would claim the memory to decompress into)")
		}
		for _, v := range []struct{ slot, size int }{{rbNodes, 16}, {rbBuffers, 16}, {rbVariadic, 8}} {
			if _, _, err := hdr.vector(v.slot, v.size); err != nil {
				return fmt.Errorf("unreadable record batch: %v", err)
			}
		}
	default:
		return fmt.Errorf("IPC message of type %d where a schema or a record batch belongs", kind)
	}
	return nil
}

// verifyField checks field f, at depth, and its children; count counts the fields seen.
func verifyField(f table, depth int, count *int, p Policy) error {
	if *count++; *count > maxFields {
		return fmt.Errorf("more than %d fields", maxFields)
	}
	if depth > maxDepth {
		return fmt.Errorf("fields nested deeper than %d", maxDepth)
	}
	if _, err := f.tables(fieldCustomMeta); err != nil {
		return err
	}
	if d, err := f.field(fieldDictionary); err != nil {
		return err
	} else if d != 0 && !p.Dictionaries {
		return fmt.Errorf("dictionary-encoded field")
	}
	tp, err := f.field(fieldTypeType)
	if err != nil {
		return err
	}
	if k, _ := f.b.u8(tp); tp != 0 && k == typeUnion {
		if u, ok, err := f.subTable(fieldType); err != nil {
			return err
		} else if ok {
			if _, _, err := u.vector(unionTypeIDs, 4); err != nil {
				return err
			}
		}
	}
	children, err := f.tables(fieldChildren)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := verifyField(c, depth+1, count, p); err != nil {
			return err
		}
	}
	return nil
}

// Schema checks b, a serialized schema as flight.SerializeSchema writes it (an encapsulated IPC
// message: an optional 0xFFFFFFFF continuation marker, a 32-bit length, the flatbuffer header),
// with Header, before arrow-go reads it: a FlightInfo's schema, or the ARROW:schema of a Parquet
// file's metadata.
func Schema(b []byte, p Policy) error {
	fb := fbuf(b)
	n, ok := fb.u32(0)
	off := 4
	if ok && n == 0xFFFFFFFF {
		n, ok = fb.u32(4)
		off = 8
	}
	if !ok || n > len(b)-off {
		return fmt.Errorf("schema of %d bytes claims a %d-byte header", len(b), n)
	}
	p.Batches = false
	return Header(b[off:off+n], len(b)-off-n, p)
}
