package cdatax

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dlpack-go/dlpack/arrowx"
)

// Limits on the metadata of a foreign ArrowSchema, which cdatax reads for the extension keys: a
// producer's metadata is untrusted, and nothing else bounds how much of it there claims to be.
const (
	maxMetadataPairs = 1024
	maxMetadataBytes = 1 << 20 // all keys and values together
)

// Keys of the extension type in a field's metadata, as IPC and the C Data Interface write them.
const (
	extensionNameKey     = "ARROW:extension:name"
	extensionMetadataKey = "ARROW:extension:metadata"
)

// readMetadata decodes the C Data Interface's metadata at p (an int32 count, then each key and
// value as an int32 length and its bytes, native-endian), refusing negative lengths and more
// than maxMetadataPairs pairs or maxMetadataBytes bytes. Only the extension keys are kept.
func readMetadata(p *byte) (name, meta string, hasName, hasMeta bool, err error) {
	if p == nil {
		return "", "", false, false, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cdatax: ArrowSchema metadata %s: %w", fmt.Sprintf(format, args...), arrowx.ErrMalformed)
	}
	at := unsafe.Pointer(p)
	i32 := func() int32 {
		v := int32(binary.NativeEndian.Uint32(unsafe.Slice((*byte)(at), 4)))
		at = unsafe.Add(at, 4)
		return v
	}
	n := i32()
	if n < 0 || n > maxMetadataPairs {
		return "", "", false, false, bad("has %d key-value pairs (0 to %d are read)", n, maxMetadataPairs)
	}
	total := 0
	str := func(what string, k int32) (string, error) {
		l := i32()
		if l < 0 || int(l) > maxMetadataBytes-total {
			return "", bad("%s %d has length %d (all keys and values together are read up to %d bytes)",
				what, k, l, maxMetadataBytes)
		}
		total += int(l)
		s := string(unsafe.Slice((*byte)(at), l))
		at = unsafe.Add(at, l)
		return s, nil
	}
	for k := int32(0); k < n; k++ {
		key, err := str("key", k)
		if err != nil {
			return "", "", false, false, err
		}
		val, err := str("value", k)
		if err != nil {
			return "", "", false, false, err
		}
		switch key {
		case extensionNameKey:
			name, hasName = val, true
		case extensionMetadataKey:
			meta, hasMeta = val, true
		}
	}
	return name, meta, hasName, hasMeta, nil
}

// extensionOf returns the type of a foreign array whose storage type the schema's format gave:
// arrowx.FixedShapeTensorType when the schema's metadata names arrow.fixed_shape_tensor (its
// metadata checked as untrusted input: a shape that does not fit the storage, negative
// dimensions, a permutation that is not one are refused with arrowx.ErrMalformed), else the
// storage type itself (an extension arrowx does not know is read as its storage, as before).
func extensionOf(s *cSchema, storage arrow.DataType) (arrow.DataType, error) {
	name, meta, hasName, hasMeta, err := readMetadata(s.metadata)
	if err != nil || !hasName || name != arrowx.FixedShapeTensorName {
		return storage, err
	}
	if !hasMeta {
		return nil, fmt.Errorf("cdatax: ArrowSchema metadata names %s but has no %s: %w", name, extensionMetadataKey,
			arrowx.ErrMalformed)
	}
	ext, err := (&arrowx.FixedShapeTensorType{}).Deserialize(storage, meta)
	if err != nil {
		return nil, fmt.Errorf("cdatax: ArrowSchema metadata: %w", err)
	}
	return ext, nil
}
