package parquetx

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/dlpack-go/dlpack/arrowx"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// arrow-go's Parquet reader allocates what the footer's Thrift structures claim before it
// checks them: a schema element claiming 2^31 children makes it allocate (and clear) 32 GiB, a
// list claiming 2^31 entries as many, and no recover catches the runtime's "out of memory". So
// every footer goes through verifyFooter first: a walk of its Thrift compact encoding that reads
// nothing into memory and checks that every list, map and string fits in the bytes left (each
// element takes one byte at least), that nesting stays within maxNesting, and that no schema
// element claims more children than the schema has elements after it.

// maxNesting bounds the nesting of the footer's Thrift structures (arrow-go's Thrift runtime
// stops at 64 too).
const maxNesting = 64

// footerBytes bounds the footer verifyFooter reads into memory to walk (arrow-go reads it whole
// too); a larger one is refused.
const footerBytes = 1 << 30

// Thrift compact protocol types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
	tUUID   = 13
)

// Field ids of FileMetaData and SchemaElement (parquet.thrift).
const (
	fmdSchema         = 2
	schemaNumChildren = 5
)

// verifyFooter checks the footer of the Parquet file r (see above); a file whose footer is
// encrypted ("PARE") is left to arrow-go, which refuses it without decryption properties.
func verifyFooter(r parquet.ReaderAtSeeker) error {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("parquetx: %w", err)
	}
	var tail [8]byte
	if size < 12 {
		return nil // arrow-go says what is wrong
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("parquetx: reading the footer: %w", err)
	}
	if string(tail[4:]) != "PAR1" {
		return nil
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 || n > footerBytes {
		return nil // arrow-go refuses a footer larger than the file
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return fmt.Errorf("parquetx: reading the footer: %w", err)
	}
	w := &walker{b: b}
	if err := w.fileMetaData(); err != nil {
		return errs.Errorf(arrowx.ErrMalformed, "parquetx: malformed footer (%d bytes): %v", n, err)
	}
	return nil
}

// walker reads Thrift compact encoding from b, at p, checking every read.
type walker struct {
	b []byte
	p int
}

func (w *walker) left() int { return len(w.b) - w.p }

func (w *walker) byte() (byte, error) {
	if w.p >= len(w.b) {
		return 0, fmt.Errorf("ends at byte %d, inside a value", w.p)
	}
	w.p++
	return w.b[w.p-1], nil
}

func (w *walker) uvarint() (uint64, error) {
	v, k := binary.Uvarint(w.b[w.p:])
	if k <= 0 {
		return 0, fmt.Errorf("bad varint at byte %d", w.p)
	}
	w.p += k
	return v, nil
}

// count reads a size (of a list, map or string) and checks that many elements of at least one
// byte fit in what is left.
func (w *walker) count(v uint64, what string) (int, error) {
	if v > uint64(w.left()) {
		return 0, fmt.Errorf("%s at byte %d claims %d entries, %d bytes are left", what, w.p, v, w.left())
	}
	return int(v), nil
}

func (w *walker) skip(n int) error {
	if n > w.left() {
		return fmt.Errorf("a value of %d bytes at byte %d, %d are left", n, w.p, w.left())
	}
	w.p += n
	return nil
}

// fileMetaData walks the footer's FileMetaData, checking its schema's children counts.
func (w *walker) fileMetaData() error {
	return w.fields(1, func(id int16, typ byte) (bool, error) {
		if id != fmdSchema || typ != tList {
			return false, nil
		}
		n, elem, err := w.listHeader()
		if err != nil {
			return true, err
		}
		if elem != tStruct {
			return true, fmt.Errorf("schema of element type %d", elem)
		}
		for i := range n {
			children := int64(0)
			err := w.fields(2, func(id int16, typ byte) (bool, error) {
				if id != schemaNumChildren || typ != tI32 {
					return false, nil
				}
				v, err := w.uvarint()
				children = int64(int32(uint32(v)>>1) ^ -int32(v&1))
				return true, err
			})
			if err != nil {
				return true, err
			}
			if children < 0 || children > int64(n-1-i) {
				return true, fmt.Errorf("schema element %d claims %d children, %d elements follow it", i, children, n-1-i)
			}
		}
		return true, nil
	})
}

// fields walks the fields of a struct at depth; visit sees each field's id and type first and
// reports whether it consumed the value (otherwise it is skipped).
func (w *walker) fields(depth int, visit func(id int16, typ byte) (bool, error)) error {
	if depth > maxNesting {
		return fmt.Errorf("structures nested deeper than %d", maxNesting)
	}
	var id int16
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		typ := h & 0x0f
		if typ == tStop {
			return nil
		}
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			v, err := w.uvarint()
			if err != nil {
				return err
			}
			id = int16(uint16(v)>>1) ^ -int16(v&1)
		}
		if visit != nil {
			done, err := visit(id, typ)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if err := w.value(typ, depth, true); err != nil {
			return err
		}
	}
}

// listHeader reads the header of a list or set: its size, checked, and element type.
func (w *walker) listHeader() (int, byte, error) {
	h, err := w.byte()
	if err != nil {
		return 0, 0, err
	}
	size := uint64(h >> 4)
	if size == 15 {
		if size, err = w.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	n, err := w.count(size, "a list")
	return n, h & 0x0f, err
}

// value skips a value of type typ at depth; inField tells a struct's field (whose boolean is in
// its type) from a list's element (whose boolean is a byte).
func (w *walker) value(typ byte, depth int, inField bool) error {
	switch typ {
	case tTrue, tFalse:
		if inField {
			return nil
		}
		return w.skip(1)
	case tByte:
		return w.skip(1)
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tDouble:
		return w.skip(8)
	case tUUID:
		return w.skip(16)
	case tBinary:
		v, err := w.uvarint()
		if err != nil {
			return err
		}
		n, err := w.count(v, "a string")
		if err != nil {
			return err
		}
		return w.skip(n)
	case tList, tSet:
		n, elem, err := w.listHeader()
		if err != nil {
			return err
		}
		for range n {
			if err := w.value(elem, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case tMap:
		v, err := w.uvarint()
		if err != nil {
			return err
		}
		n, err := w.count(v, "a map")
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := w.value(kv>>4, depth+1, false); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		return w.fields(depth+1, nil)
	}
	return fmt.Errorf("unknown Thrift type %d at byte %d", typ, w.p-1)
}
