//go:build amd64 && !purego

package ggufx

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// grid8AVX2 writes n groups of 8 elements: element j of group i is d[i]·(byte j of mags[i]), its
// sign bit flipped by masks[8·sg[i] + j]; nt not zero writes y (32-byte aligned) with
// non-temporal stores (kernels_grid_amd64.s).
//
//go:noescape
func grid8AVX2(y *float32, mags *uint64, sg *uint8, d *float32, masks *uint32, n int, nt int)

// iq1AVX2 writes n groups of 8 elements: element j of group i is d[i]·(int8 byte j of mags[i] +
// delta[i]); nt as for grid8AVX2.
//
//go:noescape
func iq1AVX2(y *float32, mags *uint64, delta *float32, d *float32, n int, nt int)

// gridBatch is the blocks a grid kernel prepares at a time: 16 blocks of 256, 512 groups of 8.
const gridBatch = 16

// groups is one batch of prepared groups.
type groups struct {
	mags [gridBatch * 32]uint64
	sg   [gridBatch * 32]uint8
	d    [gridBatch * 32]float32
}

// gridAVX2 dequantizes the blocks of x (bb bytes each) into y: prep fills the 32 groups of one
// block (mags, sign bytes, scales) from its bytes; then grid8AVX2 writes them.
func gridAVX2(y []float32, x []byte, bb int, nt int, prep func(g *groups, at int, b []byte)) {
	var g groups
	masks := &iqTab().bmask[0][0]
	for n := min(len(y)/256, len(x)/bb); n > 0; {
		k := min(n, gridBatch)
		for i := range k {
			prep(&g, 32*i, x[bb*i:bb*i+bb])
		}
		grid8AVX2(&y[0], &g.mags[0], &g.sg[0], &g.d[0], masks, 32*k, nt)
		x, y, n = x[bb*k:], y[256*k:], n-k
	}
}

func prepIQ2_XXS(g *groups, at int, x []byte) {
	b := (*[66]byte)(x)
	d := half(f16Table(), b[:])
	for ib := range 8 {
		a0 := binary.LittleEndian.Uint32(b[2+8*ib:])
		a1 := binary.LittleEndian.Uint32(b[6+8*ib:])
		db := d * (0.5 + float32(a1>>28)) * 0.25
		for l := range 4 {
			i := at + 4*ib + l
			g.mags[i] = iq2xxsGrid[uint8(a0>>(8*l))]
			g.sg[i] = ksignsIQ2XS[a1>>(7*l)&127]
			g.d[i] = db
		}
	}
}

func prepIQ2_XS(g *groups, at int, x []byte) {
	b := (*[74]byte)(x)
	d := half(f16Table(), b[:])
	for ib := range 8 {
		sc := b[66+ib]
		db0 := d * (0.5 + float32(sc&15)) * 0.25
		db1 := d * (0.5 + float32(sc>>4)) * 0.25
		for l := range 4 {
			q := binary.LittleEndian.Uint16(b[2+8*ib+2*l:])
			i := at + 4*ib + l
			g.mags[i] = iq2xsGrid[q&511]
			g.sg[i] = ksignsIQ2XS[q>>9]
			g.d[i] = db0
			if l >= 2 {
				g.d[i] = db1
			}
		}
	}
}

func prepIQ2_S(g *groups, at int, x []byte) {
	b := (*[82]byte)(x)
	d := half(f16Table(), b[:])
	for ib := range 8 {
		sc := b[74+ib]
		db0 := d * (0.5 + float32(sc&15)) * 0.25
		db1 := d * (0.5 + float32(sc>>4)) * 0.25
		qh := uint32(b[66+ib])
		for l := range 4 {
			i := at + 4*ib + l
			g.mags[i] = iq2sGrid[(uint32(b[2+4*ib+l])|qh<<(8-2*l)&0x300)&1023]
			g.sg[i] = b[34+4*ib+l]
			g.d[i] = db0
			if l >= 2 {
				g.d[i] = db1
			}
		}
	}
}

func prepIQ3_XXS(g *groups, at int, x []byte) {
	b := (*[98]byte)(x)
	d := half(f16Table(), b[:])
	for ib := range 8 {
		a := binary.LittleEndian.Uint32(b[66+4*ib:])
		db := d * (0.5 + float32(a>>28)) * 0.5
		for l := range 4 {
			i := at + 4*ib + l
			g.mags[i] = uint64(iq3xxsGrid[b[2+8*ib+2*l]]) | uint64(iq3xxsGrid[b[3+8*ib+2*l]])<<32
			g.sg[i] = ksignsIQ2XS[a>>(7*l)&127]
			g.d[i] = db
		}
	}
}

func prepIQ3_S(g *groups, at int, x []byte) {
	b := (*[110]byte)(x)
	d := half(f16Table(), b[:])
	for ib := range 8 {
		db := d * float32(1+2*(uint32(b[106+ib/2])>>(4*(ib%2))&15))
		qh := uint32(b[66+ib])
		for l := range 4 {
			i := at + 4*ib + l
			i1 := uint32(b[2+8*ib+2*l]) | qh<<(8-2*l)&256
			i2 := uint32(b[3+8*ib+2*l]) | qh<<(7-2*l)&256
			g.mags[i] = uint64(iq3sGrid[i1&511]) | uint64(iq3sGrid[i2&511])<<32
			g.sg[i] = b[74+4*ib+l]
			g.d[i] = db
		}
	}
}

// iq1Groups is one batch of prepared IQ1 groups.
type iq1Groups struct {
	mags  [gridBatch * 32]uint64
	delta [gridBatch * 32]float32
	d     [gridBatch * 32]float32
}

// iq1AVX2Blocks is gridAVX2 for IQ1_S and IQ1_M.
func iq1AVX2Blocks(y []float32, x []byte, bb int, nt int, prep func(g *iq1Groups, at int, b []byte)) {
	var g iq1Groups
	for n := min(len(y)/256, len(x)/bb); n > 0; {
		k := min(n, gridBatch)
		for i := range k {
			prep(&g, 32*i, x[bb*i:bb*i+bb])
		}
		iq1AVX2(&y[0], &g.mags[0], &g.delta[0], &g.d[0], 32*k, nt)
		x, y, n = x[bb*k:], y[256*k:], n-k
	}
}

func prepIQ1_S(g *iq1Groups, at int, x []byte) {
	b := (*[50]byte)(x)
	d := half(f16Table(), b[:])
	for ib := range 8 {
		qh := uint32(binary.LittleEndian.Uint16(b[34+2*ib:]))
		dl := d * float32(2*(qh>>12&7)+1)
		delta := iq1DeltaOf(qh >> 15)
		for l := range 4 {
			i := at + 4*ib + l
			g.mags[i] = iq1sGrid[(uint32(b[2+4*ib+l])|(qh>>(3*l)&7)<<8)&2047]
			g.delta[i] = delta
			g.d[i] = dl
		}
	}
}

func prepIQ1_M(g *iq1Groups, at int, x []byte) {
	b := (*[56]byte)(x)
	var sc [4]uint32
	for i := range sc {
		sc[i] = uint32(binary.LittleEndian.Uint16(b[48+2*i:]))
	}
	d := f16Table()[uint16(sc[0]>>12|sc[1]>>8&0x00f0|sc[2]>>4&0x0f00|sc[3]&0xf000)]
	for ib := range 8 {
		s := sc[ib/2] >> (6 * (ib % 2))
		dl1 := d * float32(2*(s&7)+1)
		dl2 := d * float32(2*(s>>3&7)+1)
		for l := range 4 {
			i := at + 4*ib + l
			h := uint32(b[32+2*ib+l/2]) >> (4 * (l % 2)) // the 4 bits of this group
			g.mags[i] = iq1sGrid[(uint32(b[4*ib+l])|(h&7)<<8)&2047]
			g.delta[i] = iq1DeltaOf(h >> 3 & 1)
			g.d[i] = dl1
			if l >= 2 {
				g.d[i] = dl2
			}
		}
	}
}

func init() {
	if !cpu.X86.HasAVX2 {
		return
	}
	for typ, k := range map[Type]struct {
		bb   int
		prep func(*groups, int, []byte)
	}{
		IQ2_XXS: {66, prepIQ2_XXS}, IQ2_XS: {74, prepIQ2_XS}, IQ2_S: {82, prepIQ2_S},
		IQ3_XXS: {98, prepIQ3_XXS}, IQ3_S: {110, prepIQ3_S},
	} {
		useAVX2(typ, func(y []float32, x []byte, nt int) { gridAVX2(y, x, k.bb, nt, k.prep) })
	}
	for typ, k := range map[Type]struct {
		bb   int
		prep func(*iq1Groups, int, []byte)
	}{IQ1_S: {50, prepIQ1_S}, IQ1_M: {56, prepIQ1_M}} {
		useAVX2(typ, func(y []float32, x []byte, nt int) { iq1AVX2Blocks(y, x, k.bb, nt, k.prep) })
	}
}
