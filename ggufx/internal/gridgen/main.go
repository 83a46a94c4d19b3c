// Command gridgen writes ggufx's zz_grids.go: the lookup tables that are part of ggml's IQ and NVFP4
// formats (the IQ2/IQ3/IQ1 grids, the IQ2 sign table, IQ4_NL's non-linear values, the UE4M3 scales),
// recovered from ggml's own library by dequantizing crafted blocks, one table entry at a time, and
// checked as they are read (every grid byte an integer in its range, every IQ1 value -1, 0 or 1).
//
// Run it from the ggufx directory (go generate ./ggufx/ does):
//
//	go run ./internal/gridgen -o zz_grids.go
//
// It loads libggml-base.so from -lib, or from what scripts/fetch-ggml.sh prints. Its test checks
// that the committed zz_grids.go is what the library gives today.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dlpack-go/dlpack/ggufx/internal/ggmlref"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// ggml's type ids of the types whose blocks are crafted.
const (
	iq2xxs = 16
	iq2xs  = 17
	iq3xxs = 18
	iq1s   = 19
	iq4nl  = 20
	iq3s   = 21
	iq2s   = 22
	nvfp4  = 40
)

// one is float16 1.0, the block scale of every crafted block.
const one = 0x3c00

// Tables are the recovered tables, in ggml's own packing: a grid entry is its bytes (int8 for IQ1)
// little-endian in one integer.
type Tables struct {
	KSigns   [128]uint8
	IQ2XXS   [256]uint64
	IQ2XS    [512]uint64
	IQ2S     [1024]uint64
	IQ3XXS   [256]uint32
	IQ3S     [512]uint32
	IQ1S     [2048]uint64
	KValues  [16]int8
	UE4M3    [256]float32
	LibPath  string
	Describe string
}

// deq dequantizes blocks of type t with l.
func deq(l *ggmlref.Lib, t int, blocks []byte) ([]float32, error) {
	n := len(blocks) / l.TypeSize(t) * l.BlockSize(t)
	y := make([]float32, n)
	return y, l.Dequantize(t, blocks, y)
}

// grid reads the 8 (or 4) values y, each step·g for an integer g in [lo, hi], and packs the g.
func grid(y []float32, step float32, lo, hi int, what string, idx int) (uint64, error) {
	var v uint64
	for j, f := range y {
		g := f / step
		if g != float32(math.Trunc(float64(g))) || g < float32(lo) || g > float32(hi) {
			return 0, fmt.Errorf("gridgen: %s entry %d, value %d: %v is not %v times an integer in [%d, %d]", what, idx, j, f, step, lo, hi)
		}
		v |= uint64(uint8(int8(int(g)))) << (8 * j)
	}
	return v, nil
}

// Recover reads every table from the library.
func Recover(l *ggmlref.Lib) (*Tables, error) {
	t := &Tables{LibPath: l.Path}
	put16 := func(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

	// IQ4_NL: d = 1, nibble j of element j: y[j] = kvalues_iq4nl[j].
	{
		b := make([]byte, 18)
		put16(b, one)
		for j := range 16 {
			b[2+j] = byte(j)
		}
		y, err := deq(l, iq4nl, b)
		if err != nil {
			return nil, err
		}
		for j := range 16 {
			k := y[j]
			if k != float32(int8(k)) {
				return nil, fmt.Errorf("gridgen: kvalues_iq4nl[%d] = %v is not an int8", j, k)
			}
			t.KValues[j] = int8(k)
		}
	}

	// IQ2_XXS with sign index 0 and scale nibble 0 (db = 1·0.5·0.25): 32 grid entries a block, the
	// eight bytes of each the values over 0.125.
	{
		b := make([]byte, 8*66)
		for k := range 8 {
			blk := b[66*k:]
			put16(blk, one)
			for ib := range 8 {
				for l := range 4 {
					blk[2+8*ib+l] = byte(32*k + 4*ib + l)
				}
			}
		}
		y, err := deq(l, iq2xxs, b)
		if err != nil {
			return nil, err
		}
		for i := range 256 {
			if t.IQ2XXS[i], err = grid(y[8*i:8*i+8], 0.125, 0, 255, "iq2xxs_grid", i); err != nil {
				return nil, err
			}
		}
	}

	// ksigns_iq2xs: IQ2_XXS, grid entry 0 (no byte zero: checked), sign index s for each group of 8:
	// y[j] < 0 is bit j of ksigns_iq2xs[s].
	{
		for j := range 8 {
			if t.IQ2XXS[0]>>(8*j)&0xff == 0 {
				return nil, fmt.Errorf("gridgen: iq2xxs_grid[0] has a zero byte: its signs cannot be seen")
			}
		}
		b := make([]byte, 4*66)
		for k := range 4 {
			blk := b[66*k:]
			put16(blk, one)
			for ib := range 8 {
				var signs uint32
				for l := range 4 {
					signs |= uint32(32*k+4*ib+l) << (7 * l)
				}
				binary.LittleEndian.PutUint32(blk[2+8*ib+4:], signs)
			}
		}
		y, err := deq(l, iq2xxs, b)
		if err != nil {
			return nil, err
		}
		for s := range 128 {
			var v uint8
			for j := range 8 {
				if math.Signbit(float64(y[8*s+j])) {
					v |= 1 << j
				}
			}
			t.KSigns[s] = v
		}
	}

	// IQ2_XS: index q & 511, sign index q >> 9 = 0, scales 0 (db = 0.125).
	{
		b := make([]byte, 16*74)
		for k := range 16 {
			blk := b[74*k:]
			put16(blk, one)
			for i := range 32 {
				put16(blk[2+2*i:], uint16(32*k+i))
			}
		}
		y, err := deq(l, iq2xs, b)
		if err != nil {
			return nil, err
		}
		for i := range 512 {
			if t.IQ2XS[i], err = grid(y[8*i:8*i+8], 0.125, 0, 255, "iq2xs_grid", i); err != nil {
				return nil, err
			}
		}
	}

	// IQ2_S: index qs[l] | bits 2l, 2l+1 of qh[ib] as bits 8, 9; signs 0, scales 0 (db = 0.125).
	{
		b := make([]byte, 32*82)
		for k := range 32 {
			blk := b[82*k:]
			put16(blk, one)
			for ib := range 8 {
				hi := 0
				for l := range 4 {
					i := 32*k + 4*ib + l
					blk[2+4*ib+l] = byte(i)
					hi |= (i >> 8) << (2 * l)
				}
				blk[66+ib] = byte(hi)
			}
		}
		y, err := deq(l, iq2s, b)
		if err != nil {
			return nil, err
		}
		for i := range 1024 {
			if t.IQ2S[i], err = grid(y[8*i:8*i+8], 0.125, 0, 255, "iq2s_grid", i); err != nil {
				return nil, err
			}
		}
	}

	// IQ3_XXS: scale and signs word 0 (db = 1·0.5·0.5), 64 entries of four bytes a block.
	{
		b := make([]byte, 4*98)
		for k := range 4 {
			blk := b[98*k:]
			put16(blk, one)
			for i := range 64 {
				blk[2+i] = byte(64*k + i)
			}
		}
		y, err := deq(l, iq3xxs, b)
		if err != nil {
			return nil, err
		}
		for i := range 256 {
			v, err := grid(y[4*i:4*i+4], 0.25, 0, 255, "iq3xxs_grid", i)
			if err != nil {
				return nil, err
			}
			t.IQ3XXS[i] = uint32(v)
		}
	}

	// IQ3_S: index qs | the qh bit as bit 8, signs 0, scales 0 (db = 1), 64 entries a block.
	{
		b := make([]byte, 8*110)
		for k := range 8 {
			blk := b[110*k:]
			put16(blk, one)
			for i := range 64 {
				idx := 64*k + i
				blk[2+i] = byte(idx)
				blk[66+i/8] |= byte(idx>>8) << (i % 8)
			}
		}
		y, err := deq(l, iq3s, b)
		if err != nil {
			return nil, err
		}
		for i := range 512 {
			v, err := grid(y[4*i:4*i+4], 1, 0, 255, "iq3s_grid", i)
			if err != nil {
				return nil, err
			}
			t.IQ3S[i] = uint32(v)
		}
	}

	// IQ1_S: qh with scale 0 (dl = 1) and delta +0.125: y = grid + 0.125, index qs[l] | 3 qh bits.
	{
		b := make([]byte, 64*50)
		for k := range 64 {
			blk := b[50*k:]
			put16(blk, one)
			for ib := range 8 {
				var qh uint16
				for l := range 4 {
					idx := 32*k + 4*ib + l
					blk[2+4*ib+l] = byte(idx)
					qh |= uint16(idx>>8) << (3 * l)
				}
				put16(blk[34+2*ib:], qh)
			}
		}
		y, err := deq(l, iq1s, b)
		if err != nil {
			return nil, err
		}
		for i := range 2048 {
			g := make([]float32, 8)
			for j := range 8 {
				g[j] = y[8*i+j] - 0.125
			}
			if t.IQ1S[i], err = grid(g, 1, -1, 1, "iq1s_grid", i); err != nil {
				return nil, err
			}
		}
	}

	// NVFP4: the four scale bytes of each block, every nibble 1 (E2M1 0.5, doubled: 1), so y is
	// the scale itself.
	{
		b := make([]byte, 64*36)
		for k := range 64 {
			blk := b[36*k:]
			for s := range 4 {
				blk[s] = byte(4*k + s)
			}
			for j := range 32 {
				blk[4+j] = 0x11
			}
		}
		y, err := deq(l, nvfp4, b)
		if err != nil {
			return nil, err
		}
		for i := range 256 {
			for j := range 16 {
				if y[16*i+j] != y[16*i] {
					return nil, fmt.Errorf("gridgen: nvfp4 scale %#x: element %d is %v, element 0 %v", i, j, y[16*i+j], y[16*i])
				}
			}
			t.UE4M3[i] = y[16*i]
		}
	}
	return t, nil
}

// Source is the Go file of the tables, package ggufx.
func Source(t *Tables) []byte {
	var w bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
	p("// Code generated by go run ./internal/gridgen; DO NOT EDIT.\n\n")
	p("package ggufx\n\n")
	p("// The tables of ggml's IQ and NVFP4 formats, recovered by ggufx/internal/gridgen from ggml's own\n")
	p("// library, %s,\n", t.Describe)
	p("// by dequantizing crafted blocks (block scale 1, one table entry at a time).\n")
	p("// A grid entry is its bytes, little-endian, in one integer (int8 bytes for iq1sGrid).\n\n")
	p("// ksignsIQ2XS is ksigns_iq2xs: 7 sign bits and their parity as the eighth.\n")
	array(&w, "ksignsIQ2XS", "uint8", 16, len(t.KSigns), func(i int) string { return fmt.Sprintf("0x%02x", t.KSigns[i]) })
	p("\n// kvaluesIQ4NL is kvalues_iq4nl: the values of IQ4_NL's and IQ4_XS's 16 codes.\n")
	array(&w, "kvaluesIQ4NL", "int8", 16, len(t.KValues), func(i int) string { return strconv.Itoa(int(t.KValues[i])) })
	p("\n// iq2xxsGrid is iq2xxs_grid: 8 magnitudes an entry.\n")
	array(&w, "iq2xxsGrid", "uint64", 4, len(t.IQ2XXS), func(i int) string { return fmt.Sprintf("0x%016x", t.IQ2XXS[i]) })
	p("\n// iq2xsGrid is iq2xs_grid: 8 magnitudes an entry.\n")
	array(&w, "iq2xsGrid", "uint64", 4, len(t.IQ2XS), func(i int) string { return fmt.Sprintf("0x%016x", t.IQ2XS[i]) })
	p("\n// iq2sGrid is iq2s_grid: 8 magnitudes an entry.\n")
	array(&w, "iq2sGrid", "uint64", 4, len(t.IQ2S), func(i int) string { return fmt.Sprintf("0x%016x", t.IQ2S[i]) })
	p("\n// iq3xxsGrid is iq3xxs_grid: 4 magnitudes an entry.\n")
	array(&w, "iq3xxsGrid", "uint32", 8, len(t.IQ3XXS), func(i int) string { return fmt.Sprintf("0x%08x", t.IQ3XXS[i]) })
	p("\n// iq3sGrid is iq3s_grid: 4 magnitudes an entry.\n")
	array(&w, "iq3sGrid", "uint32", 8, len(t.IQ3S), func(i int) string { return fmt.Sprintf("0x%08x", t.IQ3S[i]) })
	p("\n// iq1sGrid is iq1s_grid: 8 values -1, 0 or 1 (int8) an entry.\n")
	array(&w, "iq1sGrid", "uint64", 4, len(t.IQ1S), func(i int) string { return fmt.Sprintf("0x%016x", t.IQ1S[i]) })
	p("\n// ue4m3 is ggml_ue4m3_to_fp32 of every byte: NVFP4's sub-block scales (halved, as the E2M1\n")
	p("// values are doubled).\n")
	array(&w, "ue4m3", "float32", 8, len(t.UE4M3), func(i int) string {
		return strconv.FormatFloat(float64(t.UE4M3[i]), 'g', -1, 32)
	})
	return w.Bytes()
}

func array(w *bytes.Buffer, name, typ string, per, n int, item func(int) string) {
	fmt.Fprintf(w, "var %s = [%d]%s{\n", name, n, typ)
	for i := 0; i < n; i += per {
		var parts []string
		for j := i; j < min(i+per, n); j++ {
			parts = append(parts, item(j)+",")
		}
		fmt.Fprintf(w, "\t%s\n", strings.Join(parts, " "))
	}
	fmt.Fprintf(w, "}\n")
}

// describe names the library by the cache directory's version (.../ggml/<version>/libggml-base.so).
func describe(path string) string {
	return "libggml-base.so of @node-llama-cpp/linux-x64 " + filepath.Base(filepath.Dir(path))
}

func main() {
	out := flag.String("o", "zz_grids.go", "the file to write")
	lib := flag.String("lib", "", "libggml-base.so (default: what scripts/fetch-ggml.sh prints)")
	flag.Parse()
	if err := run(*out, *lib); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out, lib string) error {
	if lib == "" {
		root, err := refcheck.RepoRoot()
		if err != nil {
			return err
		}
		b, err := exec.Command("bash", filepath.Join(root, "scripts", "fetch-ggml.sh")).Output()
		if err != nil {
			return fmt.Errorf("gridgen: scripts/fetch-ggml.sh: %w", err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		lib = lines[len(lines)-1]
	}
	l, err := ggmlref.Open(lib)
	if err != nil {
		return err
	}
	t, err := Recover(l)
	if err != nil {
		return err
	}
	t.Describe = describe(lib)
	return os.WriteFile(out, Source(t), 0o644)
}
