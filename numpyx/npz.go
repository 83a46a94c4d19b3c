package numpyx

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/dlpack-go/dlpack/core"
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

// NPZOption sets how an .npz archive is read (OpenNPZ, NewNPZ, ReadNPZ) or written (WriteNPZ,
// NewNPZWriter); each option says which it is for, and the other side ignores it.
type NPZOption func(*npzConfig)

// npzConfig is what the options set.
type npzConfig struct {
	limit    int64 // MaxInflated, or -1
	compress bool  // Compressed
}

func npzConfigOf(opts []NPZOption) npzConfig {
	c := npzConfig{limit: -1}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// MaxInflated, when reading, caps the data bytes that the archive's arrays may produce, over all
// its Read calls together: a Read whose array would pass the cap fails with ErrTooLarge before
// it allocates. Bytes a member holds after its array (which are read, to verify the member's
// checksum, and ignored) count against the cap too, and a Read stops inflating them where they
// pass it (ErrTooLarge). A small compressed archive can inflate to a huge array (deflate reaches
// about 1000:1), so set it when the archive comes from someone you do not trust. The default is
// no cap.
func MaxInflated(n int64) NPZOption { return func(c *npzConfig) { c.limit = max(n, 0) } }

// Compressed, when writing, deflates the members, like numpy.savez_compressed; the default stores
// them as they are, like numpy.savez.
func Compressed() NPZOption { return func(c *npzConfig) { c.compress = true } }

// OpenNPZ opens the .npz file called name. Close it when done; the tensors it returned stay
// valid after Close (they are in memory of their own, see Read).
func OpenNPZ(name string, opts ...NPZOption) (*NPZ, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("numpyx: %w", err)
	}
	z, err := NewNPZ(f, fi.Size(), opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	z.closer = f
	return z, nil
}

// NewNPZ reads the directory of the .npz archive of size bytes in r. Members that do not end in
// ".npy" keep their whole name as their key (numpy.load does the same); two members with the
// same key are refused (ErrDuplicateKey).
func NewNPZ(r io.ReaderAt, size int64, opts ...NPZOption) (*NPZ, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are keys here, never paths
		return nil, fmt.Errorf("%w: not a zip archive: %v", ErrFormat, err)
	}
	z := &NPZ{files: map[string]*zip.File{}, size: size}
	z.limit.Store(npzConfigOf(opts).limit)
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := z.files[key]; dup {
			return nil, fmt.Errorf("%w: %w: %q", ErrFormat, ErrDuplicateKey, key)
		}
		z.files[key] = f
		z.keys = append(z.keys, key)
	}
	return z, nil
}

// Keys returns the keys of the arrays, in archive order.
func (z *NPZ) Keys() []string { return slices.Clone(z.keys) }

// Close closes the file OpenNPZ opened; it does nothing for an NPZ made by NewNPZ.
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
func (z *NPZ) member(key string) (io.ReadCloser, int64, error) {
	f, ok := z.files[key]
	if !ok {
		return nil, 0, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	avail := int64(-1)
	if f.Method == zip.Store {
		off, err := f.DataOffset()
		if err != nil {
			return nil, 0, fmt.Errorf("%w: member %q: %v", ErrFormat, f.Name, err)
		}
		if f.CompressedSize64 != f.UncompressedSize64 || f.CompressedSize64 > uint64(z.size) ||
			off < 0 || off > z.size-int64(f.CompressedSize64) {
			return nil, 0, fmt.Errorf("%w: stored member %q claims %d bytes at offset %d of a %d-byte archive",
				ErrTruncated, f.Name, f.CompressedSize64, off, z.size)
		}
		avail = int64(f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, 0, fmt.Errorf("%w: member %q: %v", ErrFormat, f.Name, err)
	}
	return memberReader{rc, f.Name}, avail, nil
}

// memberReader reports what goes wrong inside a member (corrupt deflate data, a checksum that
// does not match) as ErrFormat.
type memberReader struct {
	io.ReadCloser
	name string
}

func (m memberReader) Read(p []byte) (int, error) {
	n, err := m.ReadCloser.Read(p)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		err = fmt.Errorf("%w: member %q: %v", ErrFormat, m.name, err)
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
	if err := z.take(h.DataLen()); err != nil {
		return nil, fmt.Errorf("%w: member %q holds %d data bytes (%s %v)", err, key, h.DataLen(), h.Descr, h.Shape)
	}
	t, err := readData(rc, h, avail)
	if err != nil {
		return nil, fmt.Errorf("%w (in member %q)", err, key)
	}
	// reading to the end makes archive/zip verify the CRC-32; trailing bytes are ignored, as
	// NumPy ignores them, but inflating them is taken from the cap too: read one past what is
	// left of it, no more
	rest := io.Reader(rc)
	if left := z.limit.Load(); left >= 0 {
		rest = io.LimitReader(rc, left+1)
	}
	n, err := io.Copy(io.Discard, rest)
	if err == nil {
		if err = z.take(n); err != nil {
			err = fmt.Errorf("%w: member %q inflates to more bytes after its array", err, key)
		}
	} else if !errors.Is(err, ErrFormat) {
		err = fmt.Errorf("%w: member %q ends early: %v", ErrTruncated, key, err)
	}
	if err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// take takes n bytes from the MaxInflated cap, if there is one (ErrTooLarge when fewer are
// left), atomically: reads from several goroutines share it.
func (z *NPZ) take(n int64) error {
	for {
		left := z.limit.Load()
		if left < 0 {
			return nil
		}
		if n > left {
			return fmt.Errorf("%w: %d bytes left of the MaxInflated cap", ErrTooLarge, left)
		}
		if z.limit.CompareAndSwap(left, left-n) {
			return nil
		}
	}
}

// ReadNPZ reads every array of the .npz file called name, keyed as numpy.load keys them
// ("x.npy" is "x"). Pass MaxInflated to bound what an untrusted archive may allocate. On an
// error the arrays already read are released.
func ReadNPZ(name string, opts ...NPZOption) (map[string]*core.Tensor, error) {
	z, err := OpenNPZ(name, opts...)
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
func NewNPZWriter(w io.Writer, opts ...NPZOption) *NPZWriter {
	return &NPZWriter{zw: zip.NewWriter(w), compress: npzConfigOf(opts).compress, seen: map[string]bool{}}
}

// Write adds t under key, as the member key+".npy" (see Write for the format). Keys must be
// non-empty and unique (ErrDuplicateKey).
func (z *NPZWriter) Write(key string, t *core.Tensor) error {
	if key == "" {
		return fmt.Errorf("numpyx: empty npz key")
	}
	if z.seen[key] {
		return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
	}
	if _, err := HeaderOf(t); err != nil {
		return fmt.Errorf("numpyx: array %q: %w", key, err)
	}
	z.seen[key] = true
	fh := &zip.FileHeader{Name: key + ".npy", Method: zip.Store}
	if z.compress {
		fh.Method = zip.Deflate
	}
	w, err := z.zw.CreateHeader(fh)
	if err != nil {
		return fmt.Errorf("numpyx: array %q: %w", key, err)
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
func WriteNPZ(name string, arrays map[string]*core.Tensor, opts ...NPZOption) error {
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
