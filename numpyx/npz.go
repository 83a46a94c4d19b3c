package numpyx

import (
	"archive/zip"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

// NPZ is an .npz archive open for reading, member by member: opening reads only the zip
// directory, and each array is read (inflated if it was compressed) when asked for. Keys are
// the member names without their ".npy" suffix, as numpy.load gives them. An NPZ may be read
// from several goroutines at once when its io.ReaderAt allows it (files do).
type NPZ struct {
	files  map[string]*zip.File
	keys   []string
	size   int64
	closer io.Closer
	// limit is the cap on the data bytes Read may still produce (MaxInflated), or -1; reads
	// from several goroutines take from it at once
	limit atomic.Int64
}

// limitKey and compressKey hold MaxInflated's and Compressed's settings in adapters.Options.
type (
	limitKey    struct{}
	compressKey struct{}
)

// npzConfig is what the options set.
type npzConfig struct {
	limit    int64 // MaxInflated, or -1
	compress bool  // Compressed
}

func npzConfigOf(opts []adapters.Option) npzConfig {
	o := adapters.Apply(opts...)
	c := npzConfig{limit: -1}
	if v, ok := o.Extra(limitKey{}); ok {
		c.limit = v.(int64)
	}
	if _, ok := o.Extra(compressKey{}); ok {
		c.compress = true
	}
	return c
}

// MaxInflated, when reading, caps the bytes that reading the archive's members may produce, over
// all calls together (Header, Read, Open): .npy headers, arrays, and the bytes a member holds
// after its array (which are read, to verify the member's checksum, and ignored), inflated or
// stored. A Read whose array would pass the cap fails with ErrTooLarge before it allocates, and
// any read stops where the bytes it inflates pass the cap (ErrTooLarge). A small compressed
// archive can inflate to a huge array (deflate reaches about 1000:1), so set it when the archive
// comes from someone you do not trust. The default is no cap. (Whatever the cap, a member is
// inflated from its own bytes only: archives whose members share compressed data are refused
// when they are opened.)
//
// Other packages ignore it, and so does everything in numpyx but the .npz readers.
func MaxInflated(n int64) adapters.Option { return adapters.WithExtra(limitKey{}, max(n, 0)) }

// Compressed, when writing, deflates the members, like numpy.savez_compressed; the default stores
// them as they are, like numpy.savez.
// Other packages ignore it, and so does everything in numpyx but the .npz writers.
func Compressed() adapters.Option { return adapters.WithExtra(compressKey{}, true) }

// Open opens the .npz file called name, the package's many-tensor file. Close it when done; the
// tensors it returned stay valid after Close (they are in memory of their own, see NPZ.Read:
// members are inflated, so no option makes them share the file). What is not a regular file (a
// named pipe, a device, a directory) is refused with ErrNotRegularFile, without blocking.
func Open(name string, opts ...adapters.Option) (*NPZ, error) {
	f, size, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	z, err := NewReader(f, size, opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	z.closer = f
	return z, nil
}

// NewReader reads the directory of the .npz archive of size bytes in r. Members that do not end in
// ".npy" keep their whole name as their key (numpy.load does the same); two members with the
// same key are refused (ErrDuplicateKey). The directory is checked before anything is inflated:
// every member's data must lie inside the archive (ErrTruncated), and no two members' data may
// overlap (ErrFormat): a directory of many entries over one compressed stream, as zip bombs are
// built, would inflate that stream once per entry. Looking a key up takes constant time, however
// many members the archive has.
func NewReader(r io.ReaderAt, size int64, opts ...adapters.Option) (*NPZ, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are keys here, never paths
		return nil, errs.Errorf(ErrFormat, "numpyx: not a zip archive: %v", err)
	}
	z := &NPZ{files: make(map[string]*zip.File, len(zr.File)), keys: make([]string, 0, len(zr.File)), size: size}
	z.limit.Store(npzConfigOf(opts).limit)
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := z.files[key]; dup {
			return nil, errs.Errorf(ErrFormat, "%w", errs.Errorf(ErrDuplicateKey, "numpyx: the archive holds two arrays under the key %q", key))
		}
		z.files[key] = f
		z.keys = append(z.keys, key)
	}
	if err := checkExtents(zr.File, size); err != nil {
		return nil, err
	}
	return z, nil
}

// extent is the bytes of the archive that one member's data occupies, [off, end).
type extent struct {
	off, end int64
	name     string
}

// checkExtents refuses members whose data lie outside the archive, or overlap another member's.
func checkExtents(files []*zip.File, size int64) error {
	ext := make([]extent, 0, len(files))
	for _, f := range files {
		off, err := f.DataOffset()
		if err != nil {
			return errs.Errorf(ErrFormat, "numpyx: %v (member %q)", err, f.Name)
		}
		if f.CompressedSize64 > uint64(size) || off < 0 || off > size-int64(f.CompressedSize64) {
			return errs.Errorf(ErrTruncated, "numpyx: member %q claims %d bytes at offset %d of a %d-byte archive",
				f.Name, f.CompressedSize64, off, size)
		}
		if f.CompressedSize64 > 0 {
			ext = append(ext, extent{off, off + int64(f.CompressedSize64), f.Name})
		}
	}
	slices.SortFunc(ext, func(a, b extent) int { return cmp.Compare(a.off, b.off) })
	for i := 1; i < len(ext); i++ {
		if p, e := ext[i-1], ext[i]; e.off < p.end {
			return errs.Errorf(ErrFormat, "numpyx: members %q and %q share bytes %d to %d of the archive (zip entries over one "+
				"compressed stream, which would be inflated once per entry)", p.name, e.name, e.off, min(p.end, e.end))
		}
	}
	return nil
}

// Keys returns the keys of the arrays, in archive order.
func (z *NPZ) Keys() []string { return slices.Clone(z.keys) }

// Close closes the file Open opened; it does nothing for an NPZ made by NewReader.
func (z *NPZ) Close() error {
	if z.closer == nil {
		return nil
	}
	err := z.closer.Close()
	z.closer = nil
	return err
}

// member opens the member under key and reports how many bytes it holds, or -1 when that is
// not known until it is inflated.
func (z *NPZ) member(key string) (*memberReader, int64, error) {
	f, ok := z.files[key]
	if !ok {
		return nil, 0, errs.Errorf(ErrNotFound, "numpyx: no array %q in the archive", key)
	}
	avail := int64(-1)
	if f.Method == zip.Store {
		off, err := f.DataOffset()
		if err != nil {
			return nil, 0, errs.Errorf(ErrFormat, "numpyx: %v (member %q)", err, f.Name)
		}
		if f.CompressedSize64 != f.UncompressedSize64 || f.CompressedSize64 > uint64(z.size) ||
			off < 0 || off > z.size-int64(f.CompressedSize64) {
			return nil, 0, errs.Errorf(ErrTruncated, "numpyx: stored member %q claims %d bytes at offset %d of a %d-byte archive",
				f.Name, f.CompressedSize64, off, z.size)
		}
		avail = int64(f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, 0, errs.Errorf(ErrFormat, "numpyx: %v (member %q)", err, f.Name)
	}
	return &memberReader{ReadCloser: rc, key: key, z: z}, avail, nil
}

// memberReader takes every byte it reads from the MaxInflated cap (from what reserve took for
// it first), never asking the member for more than one byte past what is left, and reports what
// goes wrong inside a member (corrupt deflate data, a checksum that does not match) as ErrFormat.
type memberReader struct {
	io.ReadCloser
	key      string
	z        *NPZ
	reserved int64 // bytes already taken from the cap for this reader
}

// reserve takes the n data bytes of h from the cap at once, before they are read: a Read then
// fails before it allocates, and concurrent reads never allocate past the cap together.
func (m *memberReader) reserve(h Header) error {
	n := h.DataLen()
	if left, ok := m.z.take(n); !ok {
		return errs.Errorf(ErrTooLarge, "numpyx: member %q holds %d data bytes (%s %v), %d bytes are left of the MaxInflated cap",
			m.key, n, h.Descr, h.Shape, left)
	}
	m.reserved += n
	return nil
}

func (m *memberReader) Read(p []byte) (int, error) {
	if left := m.z.limit.Load(); left >= 0 && int64(len(p)) > m.reserved+left+1 {
		p = p[:m.reserved+left+1]
	}
	n, err := m.ReadCloser.Read(p)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		err = errs.Errorf(ErrFormat, "numpyx: %v (member %q)", err, m.key)
	}
	paid := min(int64(n), m.reserved)
	m.reserved -= paid
	if left, ok := m.z.take(int64(n) - paid); !ok {
		return 0, errs.Errorf(ErrTooLarge, "numpyx: member %q inflates past the MaxInflated cap (%d bytes were left)", m.key, left)
	}
	return n, err
}

// Header reads the .npy header of the array under key.
func (z *NPZ) Header(key string) (Header, error) {
	rc, _, err := z.member(key)
	if err != nil {
		return Header{}, err
	}
	defer rc.Close()
	h, err := ReadHeader(rc)
	if err != nil {
		return Header{}, fmt.Errorf("%w (in member %q)", err, key)
	}
	return h, nil
}

// Read reads the array under key into a new tensor in memory of its own (see Read). A stored
// member is bounded by its size in the archive; a compressed one is inflated in growing chunks,
// so that a member whose header promises more than it holds is refused (ErrTruncated) without
// costing more than twice what it holds. The member's checksum is verified.
func (z *NPZ) Read(key string) (*core.Tensor, error) {
	rc, avail, err := z.member(key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h, err := ReadHeader(rc)
	if err != nil {
		return nil, fmt.Errorf("%w (in member %q)", err, key)
	}
	if avail >= 0 {
		avail -= h.DataOffset
	}
	if err := rc.reserve(h); err != nil {
		return nil, err
	}
	t, err := readData(rc, h, avail)
	if err != nil {
		return nil, fmt.Errorf("%w (in member %q)", err, key)
	}
	if err := drain(rc, key); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// drain reads a member to its end, which makes archive/zip verify its CRC-32; bytes after the
// array are ignored, as NumPy ignores them (and taken from the MaxInflated cap, which stops
// inflating them where they pass it).
func drain(rc io.Reader, key string) error {
	_, err := io.Copy(io.Discard, rc)
	if err != nil && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrTooLarge) {
		err = errs.Errorf(ErrTruncated, "numpyx: member %q ends early: %v", key, err)
	}
	return err
}

// Open opens the array under key for streaming, for arrays too large to read whole: it reads
// the member's .npy header and returns it with a reader of the array's data bytes, in the file's
// byte order (Header.NeedsSwap) and layout (Header.Fortran), exactly Header.DataLen() of them.
// The reader verifies the member as it reaches the end: it returns io.EOF only after the last
// data byte, once the member's checksum matched (trailing bytes are read and ignored, as Read
// ignores them); a member that ends early is ErrTruncated, corrupt data or a checksum that does
// not match ErrFormat, and bytes past the MaxInflated cap ErrTooLarge. Close the reader when
// done; several may be open at once, from several goroutines.
func (z *NPZ) Open(key string) (Header, io.ReadCloser, error) {
	rc, avail, err := z.member(key)
	if err != nil {
		return Header{}, nil, err
	}
	h, err := ReadHeader(rc)
	if err != nil {
		rc.Close()
		return Header{}, nil, fmt.Errorf("%w (in member %q)", err, key)
	}
	n := h.DataLen()
	if avail >= 0 && n > avail-h.DataOffset {
		rc.Close()
		return Header{}, nil, errs.Errorf(ErrTruncated, "numpyx: header promises %d data bytes (%s %v), the member holds %d (in member %q)",
			n, h.Descr, h.Shape, avail-h.DataOffset, key)
	}
	if err := rc.reserve(h); err != nil {
		rc.Close()
		return Header{}, nil, err
	}
	return h, &dataReader{rc: rc, left: n, key: key}, nil
}

// dataReader gives the data bytes of one member, then drains the member (see Open).
type dataReader struct {
	rc   io.ReadCloser
	left int64 // data bytes still to give
	key  string
	err  error // sticky: io.EOF at the end, or what went wrong
}

func (d *dataReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.left == 0 {
		if d.err = drain(d.rc, d.key); d.err == nil {
			d.err = io.EOF
		}
		return 0, d.err
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.rc.Read(p)
	d.left -= int64(n)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if d.left > 0 {
			d.err = errs.Errorf(ErrTruncated, "numpyx: member %q ends %d data bytes early", d.key, d.left)
			return n, d.err
		}
	case err != nil:
		d.err = err
		return n, err
	}
	return n, nil
}

func (d *dataReader) Close() error { return d.rc.Close() }

// take takes n bytes from the MaxInflated cap, if there is one, atomically: reads from several
// goroutines share it. When fewer are left it takes none and returns how many are, and false.
func (z *NPZ) take(n int64) (left int64, ok bool) {
	for {
		left := z.limit.Load()
		if left < 0 || n == 0 {
			return left, true
		}
		if n > left {
			return left, false
		}
		if z.limit.CompareAndSwap(left, left-n) {
			return left - n, true
		}
	}
}

// ReadNPZ reads every array of the .npz file called name, keyed as numpy.load keys them
// ("x.npy" is "x"). Pass MaxInflated to bound what an untrusted archive may allocate. On an
// error the arrays already read are released.
func ReadNPZ(name string, opts ...adapters.Option) (map[string]*core.Tensor, error) {
	z, err := Open(name, opts...)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	out := make(map[string]*core.Tensor, len(z.keys))
	for _, k := range z.keys {
		t, err := z.Read(k)
		if err != nil {
			for _, t := range out {
				t.Release()
			}
			return nil, err
		}
		out[k] = t
	}
	return out, nil
}

// NPZWriter writes an .npz archive one array at a time, each streamed straight into the
// archive.
type NPZWriter struct {
	zw       *zip.Writer
	compress bool
	seen     map[string]bool
}

// NewNPZWriter starts an .npz archive on w. Members are stored as they are, like numpy.savez,
// or deflated with Compressed(), like numpy.savez_compressed. Close finishes the archive.
func NewNPZWriter(w io.Writer, opts ...adapters.Option) *NPZWriter {
	return &NPZWriter{zw: zip.NewWriter(w), compress: npzConfigOf(opts).compress, seen: map[string]bool{}}
}

// Write adds t under key, as the member key+".npy" (see Write for the format). Keys must be
// non-empty and unique (ErrDuplicateKey).
func (z *NPZWriter) Write(key string, t *core.Tensor) error {
	if key == "" {
		return errs.Errorf(core.ErrArgument, "numpyx: an npz key must not be empty")
	}
	if z.seen[key] {
		return errs.Errorf(ErrDuplicateKey, "numpyx: key %q is written twice", key)
	}
	if _, err := HeaderOf(t); err != nil {
		return fmt.Errorf("%w (array %q)", err, key)
	}
	z.seen[key] = true
	fh := &zip.FileHeader{Name: key + ".npy", Method: zip.Store}
	if z.compress {
		fh.Method = zip.Deflate
	}
	w, err := z.zw.CreateHeader(fh)
	if err != nil {
		return fmt.Errorf("numpyx: %w (array %q)", err, key)
	}
	if err := Write(w, t); err != nil {
		return fmt.Errorf("%w (array %q)", err, key)
	}
	return nil
}

// Close writes the archive's directory. It does not close the underlying writer.
func (z *NPZWriter) Close() error {
	if err := z.zw.Close(); err != nil {
		return fmt.Errorf("numpyx: %w", err)
	}
	return nil
}

// WriteNPZ writes arrays to the file called name as an .npz archive, in key order; numpy.load
// reads each back under its key. Members are stored as they are, like numpy.savez, or deflated
// with Compressed(), like numpy.savez_compressed. The file is replaced as WriteFile replaces
// one.
func WriteNPZ(name string, arrays map[string]*core.Tensor, opts ...adapters.Option) error {
	return tensorio.ReplaceFile("numpyx", name, func(f *os.File) error {
		z := NewNPZWriter(f, opts...)
		keys := make([]string, 0, len(arrays))
		for k := range arrays {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := z.Write(k, arrays[k]); err != nil {
				return err
			}
		}
		return z.Close()
	})
}
