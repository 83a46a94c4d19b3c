package safetensorsx_test

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/leakcheck"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// threeU8 is a file of three U8 tensors: a (8 bytes of 1), b (200 bytes of 2), c (8 bytes of 3).
func threeU8(t *testing.T) []byte {
	t.Helper()
	mk := func(n int, v byte) *core.Tensor {
		return fromBytes(t, core.Uint8, []int64{int64(n)}, bytes.Repeat([]byte{v}, n))
	}
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, map[string]*core.Tensor{"a": mk(8, 1), "b": mk(200, 2), "c": mk(8, 3)}, nil))
	return buf.Bytes()
}

// TestReadTensorsHeaderNotTiling: ReadTensors takes a *Header from its caller, whose fields
// are exported; one that no longer tiles the data section (a tensor dropped from the middle,
// a range shorter than its shape needs) must be refused with ErrLayout, not panic nor hand out
// tensors with bytes the reader never supplied (memory of a block reused from core's cache).
func TestReadTensorsHeaderNotTiling(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapped allocation is Linux only")
	}
	file := threeU8(t)
	// every slab mapped, from a cache, so that a slab reuses an earlier block's bytes
	prev := memory.SetAllocation(memory.Allocation{MappedMin: 1, CacheBytes: 64 << 20, CacheIdle: time.Minute})
	defer memory.SetAllocation(prev)
	base := leakcheck.Settle()

	header := func() (*safetensorsx.Header, *bytes.Reader) {
		r := bytes.NewReader(file)
		h, err := safetensorsx.ReadHeader(r)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, h.Names()) // one element size: by name
		return h, r
	}
	cases := []struct {
		name string
		edit func(h *safetensorsx.Header)
	}{
		{"a tensor dropped from the middle", func(h *safetensorsx.Header) {
			h.Tensors = []safetensorsx.TensorInfo{h.Tensors[0], h.Tensors[2]}
		}},
		{"a range shorter than its shape", func(h *safetensorsx.Header) {
			h.Tensors[0].Shape = []int64{64} // 8 bytes in the file, 64 in the tensor
		}},
		{"the last range shorter than its shape", func(h *safetensorsx.Header) {
			h.Tensors[2].Shape = []int64{64} // its slot's padding, never read into, shows
		}},
		{"more lanes than the range holds", func(h *safetensorsx.Header) {
			h.Tensors[2].DType.Lanes = 4
		}},
		{"a range longer than its shape", func(h *safetensorsx.Header) {
			h.Tensors[0].Shape = []int64{2}
		}},
		{"out of order", func(h *safetensorsx.Header) {
			h.Tensors[0], h.Tensors[1] = h.Tensors[1], h.Tensors[0]
		}},
		{"data length not the tensors' end", func(h *safetensorsx.Header) {
			h.Tensors = h.Tensors[:2]
		}},
	}
	for _, c := range cases {
		// a block of the slab's size, full of 0xEE, back in the cache
		dirty, err := memory.NewUninit(core.Uint8, 64<<10)
		require.NoError(t, err)
		require.True(t, dirty.Foreign())
		b, err := dirty.Bytes()
		require.NoError(t, err)
		for i := range b {
			b[i] = 0xEE
		}
		dirty.Release()

		h, r := header()
		c.edit(h)
		var got map[string]*core.Tensor
		if !assert.NotPanics(t, func() { got, err = safetensorsx.ReadTensors(r, h) }, c.name) {
			continue
		}
		if err == nil {
			for name, x := range got {
				xb, err := x.ReadOnlyBytes()
				require.NoError(t, err)
				assert.NotContains(t, xb, byte(0xEE), "%s: tensor %q shows bytes the file did not supply", c.name, name)
				x.Release()
			}
		}
		assert.True(t, errors.Is(err, safetensorsx.ErrLayout), "%s: want ErrLayout, got %v", c.name, err)
	}
	assert.Equal(t, base, leakcheck.Settle())
}

// TestReadTensorsNilHeaderAndReadAllChangedHeader: a nil Header is an error, not a panic; and
// Reader.ReadAll, whose Header its caller can reach (and was told not to change), checks it as
// ReadTensors does.
func TestReadTensorsNilHeaderAndReadAllChangedHeader(t *testing.T) {
	file := threeU8(t)
	var err error
	require.NotPanics(t, func() { _, err = safetensorsx.ReadTensors(bytes.NewReader(file), nil) })
	require.ErrorIs(t, err, safetensorsx.ErrHeader)

	base := leakcheck.Settle()
	rd, err := safetensorsx.NewReader(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	rd.Header().Tensors = rd.Header().Tensors[1:] // "b" and "c": the data no longer starts with a tensor
	require.NotPanics(t, func() { _, err = rd.ReadAll() })
	require.ErrorIs(t, err, safetensorsx.ErrLayout)
	assert.Equal(t, base, leakcheck.Settle())
}

// dirtyCache leaves a block of 64 KiB (the smallest mapped block) full of 0xEE in core's cache,
// for the next slab to reuse.
func dirtyCache(t *testing.T) {
	t.Helper()
	x, err := memory.NewUninit(core.Uint8, 64<<10)
	require.NoError(t, err)
	b, err := x.Bytes()
	require.NoError(t, err)
	for i := range b {
		b[i] = 0xEE
	}
	x.Release()
}

// FuzzReadMapped reads arbitrary files with every slab mapped and taken from a cache whose
// block is full of 0xEE: each tensor every read path returns holds exactly the bytes the file
// has at its range (bools as 0 or 1), never a byte of the reused block; every slab goes back on
// release and on error.
func FuzzReadMapped(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	prev := memory.SetAllocation(memory.Allocation{MappedMin: 1, CacheBytes: 16 << 20, CacheIdle: time.Minute})
	f.Cleanup(func() { memory.SetAllocation(prev) })
	leakcheck.Settle()
	f.Fuzz(func(t *testing.T, data []byte) {
		base := core.LiveForeign()
		h, err := safetensorsx.ReadHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		want := func(name string) []byte {
			ti, ok := h.Lookup(name)
			require.True(t, ok, name)
			b := bytes.Clone(data[h.DataOffset+ti.Begin : min(h.DataOffset+ti.End, int64(len(data)))])
			if ti.DType == core.Bool {
				for i, v := range b {
					b[i] = min(v, 1)
				}
			}
			return b
		}
		for name, read := range map[string]func() (map[string]*core.Tensor, error){
			"Read, sized": func() (map[string]*core.Tensor, error) { return safetensorsx.Read(bytes.NewReader(data)) },
			"Read, stream": func() (map[string]*core.Tensor, error) {
				return safetensorsx.Read(onlyReader{bytes.NewReader(data)})
			},
			"ReadHeader + ReadTensors": func() (map[string]*core.Tensor, error) {
				r := bytes.NewReader(data)
				h, err := safetensorsx.ReadHeader(r)
				require.NoError(t, err)
				return safetensorsx.ReadTensors(r, h)
			},
			"Reader.ReadAll": func() (map[string]*core.Tensor, error) {
				r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					return nil, err
				}
				return r.ReadAll()
			},
			"Reader.Tensor": func() (map[string]*core.Tensor, error) {
				r, err := safetensorsx.NewReader(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					return nil, err
				}
				out := map[string]*core.Tensor{}
				for _, n := range r.Names() {
					x, err := r.Tensor(n)
					if err != nil {
						for _, x := range out {
							x.Release()
						}
						return nil, err
					}
					out[n] = x
				}
				return out, nil
			},
		} {
			dirtyCache(t)
			ts, err := read()
			checkErr(t, err)
			if int64(len(data)) == h.DataOffset+h.DataLen {
				require.NoError(t, err, "%s: a well-formed file", name)
			}
			for n, x := range ts {
				require.Equal(t, want(n), cBytes(t, x), "%s: tensor %q", name, n)
				x.Release()
			}
			require.Equal(t, base, core.LiveForeign(), "%s: every slab went back", name)
		}
	})
}

// lyingLen is a reader whose Len claims more than it holds: a pipe or a file cut short while
// being read, as the sized path of Read sees it.
type lyingLen struct {
	r     *bytes.Reader
	claim int
}

func (l *lyingLen) Read(p []byte) (int, error) { return l.r.Read(p) }
func (l *lyingLen) Len() int                   { return l.claim }

// TestReadShortAfterSizeCheck: data that ends after the size check passed (mid-slab) is
// ErrTruncated, every slab goes back at once, and no tensor is returned, with slabs mapped over
// a cache of dirty blocks.
func TestReadShortAfterSizeCheck(t *testing.T) {
	file := threeU8(t)
	prev := memory.SetAllocation(memory.Allocation{MappedMin: 1, CacheBytes: 16 << 20, CacheIdle: time.Minute})
	defer memory.SetAllocation(prev)
	base := leakcheck.Settle()
	h, err := safetensorsx.ReadHeader(bytes.NewReader(file))
	require.NoError(t, err)
	for cut := int(h.DataOffset); cut < len(file); cut += 7 {
		dirtyCache(t)
		r := bytes.NewReader(file[:cut])
		_, err := safetensorsx.ReadHeader(r)
		require.NoError(t, err)
		got, err := safetensorsx.ReadTensors(&lyingLen{r: r, claim: int(h.DataLen)}, h)
		require.ErrorIs(t, err, safetensorsx.ErrTruncated, "cut at %d", cut)
		assert.Nil(t, got)
		require.Equal(t, base, core.LiveForeign(), "cut at %d: every slab went back", cut)
	}
}

// TestFileTensorChangedHeader: File.Header is shared with the File; a caller that changes a
// tensor's shape or range there gets ErrLayout from File.Tensor, never a tensor that reaches
// past the mapping.
func TestFileTensorChangedHeader(t *testing.T) {
	path := t.TempDir() + "/three.safetensors"
	require.NoError(t, os.WriteFile(path, threeU8(t), 0o644))
	for _, c := range []struct {
		name   string
		change func(ti *safetensorsx.TensorInfo)
	}{
		{"shape larger than the range", func(ti *safetensorsx.TensorInfo) { ti.Shape = []int64{1 << 20} }},
		{"range past the end", func(ti *safetensorsx.TensorInfo) { ti.Begin, ti.End = 1<<30, 1<<30+8 }},
		{"negative range", func(ti *safetensorsx.TensorInfo) { ti.Begin, ti.End = -8, 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := leakcheck.Settle()
			f, err := safetensorsx.Open(path)
			require.NoError(t, err)
			h := f.Header()
			for i := range h.Tensors {
				if h.Tensors[i].Name == "c" {
					c.change(&h.Tensors[i])
				}
			}
			_, err = f.Tensor("c")
			require.ErrorIs(t, err, safetensorsx.ErrLayout)
			a, err := f.Tensor("a") // the others are as they were
			require.NoError(t, err)
			h2, err := core.Hold(a)
			require.NoError(t, err)
			b, err := a.ReadOnlyBytes()
			require.NoError(t, err)
			assert.Equal(t, bytes.Repeat([]byte{1}, 8), b)
			h2.Release()
			a.Release()
			require.NoError(t, f.Close())
			assert.Equal(t, base, leakcheck.Settle())
		})
	}
}
