package ggufx_test

import (
	"errors"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// DequantizeInto converts into a tensor the caller already has: here one float16 buffer takes
// the same weight twice, and nothing is allocated for the elements the second time.
func ExampleFile_DequantizeInto() {
	dir, path := exampleFile()
	defer os.RemoveAll(dir)
	f, err := ggufx.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ti, err := f.Info("attn.weight")
	if err != nil {
		log.Fatal(err)
	}
	buf, err := core.New(core.Float16, ti.Shape()...)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Release()
	for range 2 {
		if err := f.DequantizeInto("attn.weight", buf); err != nil {
			log.Fatal(err)
		}
	}
	v, _ := buf.Float16s()
	fmt.Println(buf.Shape(), v[0], v[1], v[32])
	err = f.DequantizeInto("attn.weight", core.MustNew(core.Float32, 32, 2))
	fmt.Println(errors.Is(err, core.ErrShape))
	// Output:
	// [2 32] 127 -15 -127
	// true
}

// DequantizeInto writes every float32 and float16 destination of the tensor's shape, including a
// view into a larger buffer that is contiguous, and refuses the others before writing anything.
func TestDequantizeInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	blocks := map[ggufx.Type][]byte{ggufx.IQ4_XS: ggmlBlocks(rng, ggufx.IQ4_XS, 6, true)}
	f := quantFile(t, blocks, []ggufx.Type{ggufx.IQ4_XS}) // shape [3, 512]
	want, err := f.Dequantize("IQ4_XS", core.Float32)
	require.NoError(t, err)
	defer want.Release()
	wv, err := want.Float32s()
	require.NoError(t, err)

	// a contiguous slice of rows 1..3 of a [4, 512] buffer
	big := core.MustNew(core.Float32, 4, 512)
	defer big.Release()
	view, err := big.Slice(0, 1, 4, 1)
	require.NoError(t, err)
	defer view.Release()
	require.NoError(t, f.DequantizeInto("IQ4_XS", view))
	bv, err := big.Float32s()
	require.NoError(t, err)
	assert.Equal(t, make([]float32, 512), bv[:512], "row 0 is not the destination")
	for i := range wv {
		require.Equal(t, math.Float32bits(wv[i]), math.Float32bits(bv[512+i]), "element %d", i)
	}

	untouched := func(dst *core.Tensor) {
		b, err := dst.ReadOnlyBytes()
		if err != nil {
			return // not contiguous: nothing to look at this way
		}
		for _, c := range b {
			require.Zero(t, c, "a refused destination was written")
		}
	}
	released := core.MustNew(core.Float32, 3, 512)
	released.Release()
	ro, err := core.MustNew(core.Float32, 3, 512).AsReadOnly()
	require.NoError(t, err)
	defer ro.Release()
	wide := core.MustNew(core.Float32, 3, 1024)
	defer wide.Release()
	strided, err := wide.Slice(1, 0, 512, 1)
	require.NoError(t, err)
	defer strided.Release()
	closed := quantFile(t, blocks, []ggufx.Type{ggufx.IQ4_XS})
	require.NoError(t, closed.Close())
	cases := []struct {
		name string
		dst  *core.Tensor
		file *ggufx.File
		want error
	}{
		{"float64", core.MustNew(core.Float64, 3, 512), f, ggufx.ErrType},
		{"bfloat16", core.MustNew(core.BFloat16, 3, 512), f, ggufx.ErrType},
		{"shape", core.MustNew(core.Float32, 512, 3), f, core.ErrShape},
		{"rank", core.MustNew(core.Float32, 3*512), f, core.ErrShape},
		{"nil", nil, f, core.ErrNil},
		{"released", released, f, core.ErrReleased},
		{"read-only", ro, f, core.ErrReadOnly},
		{"strided", strided, f, core.ErrNotContiguous},
		{"closed", core.MustNew(core.Float32, 3, 512), closed, ggufx.ErrClosed},
	}
	var errCases []errstest.Case
	for _, c := range cases {
		err := c.file.DequantizeInto("IQ4_XS", c.dst)
		require.ErrorIs(t, err, c.want, c.name)
		if c.dst != nil && !c.dst.Released() {
			untouched(c.dst)
		}
		errCases = append(errCases, errstest.Case{Name: "DequantizeInto: " + c.name, Want: c.want, Err: func() error { return err }})
	}
	err = f.DequantizeInto("none", core.MustNew(core.Float32, 1))
	require.ErrorIs(t, err, ggufx.ErrNotFound)
	errstest.Run(t, `^ggufx: `, errCases, sentinels...)
}

// FuzzDequantize dequantizes arbitrary bytes as blocks of every type, to float32 and float16,
// through Dequantize and DequantizeInto: nothing may fault or read past the tensor (the blocks
// end the file's mapping, so a read past them would fault), and both ways give the same bits.
func FuzzDequantize(f *testing.F) {
	f.Add(uint8(0), uint8(1), []byte{})
	f.Add(uint8(12), uint8(2), []byte{0x00, 0x3c, 0xff, 0x80})
	f.Add(uint8(28), uint8(3), []byte("IQ1_M and NVFP4 blocks of any bytes"))
	f.Fuzz(func(t *testing.T, pick, nblocks uint8, seed []byte) {
		types := append([]ggufx.Type{}, allQuantized...)
		typ := types[int(pick)%len(types)]
		n := int(nblocks)%4 + 1
		bb := typ.BlockBytes()
		data := make([]byte, n*bb)
		for i := range data {
			if len(seed) > 0 {
				data[i] = seed[i%len(seed)] ^ byte(i/len(seed))
			}
		}
		// the file ends at the last block: its data section is exactly the tensor
		r := start(3, 1, 0).tensor("t", uint32(typ), 0, uint64(n*typ.BlockSize()))
		r.data(32, 0, nil).bytes(data...)
		file, err := ggufx.Open(file(t, r.b))
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		for _, dt := range []core.DLDataType{core.Float32, core.Float16} {
			x, err := file.Dequantize("t", dt)
			if err != nil {
				t.Fatalf("%s to %s: %v", typ, dt, err)
			}
			if x.Len() != int64(n*typ.BlockSize()) {
				t.Fatalf("%s: %d elements, want %d", typ, x.Len(), n*typ.BlockSize())
			}
			dst := core.MustNew(dt, x.Shape()...)
			if err := file.DequantizeInto("t", dst); err != nil {
				t.Fatalf("%s into %s: %v", typ, dt, err)
			}
			a, _ := x.ReadOnlyBytes()
			b, _ := dst.ReadOnlyBytes()
			if string(a) != string(b) {
				t.Fatalf("%s to %s: DequantizeInto differs from Dequantize", typ, dt)
			}
			x.Release()
			dst.Release()
		}
	})
}
