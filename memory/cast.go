package memory

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// number is every element type that Go converts with a plain conversion.
type number interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

type castFunc func(p plan)

// casts holds a kernel for every ordered pair of distinct castable dtypes.
var casts = map[[2]core.DLDataType]castFunc{}

func init() {
	fromReal[int8]()
	fromReal[int16]()
	fromReal[int32]()
	fromReal[int64]()
	fromReal[uint8]()
	fromReal[uint16]()
	fromReal[uint32]()
	fromReal[uint64]()
	fromReal[float32]()
	fromReal[float64]()
	// float16 and bfloat16 have direct float32 kernels; the rest go through a general path
	register(core.Float32, core.Float16, castFloat32ToFloat16)
	register(core.Float16, core.Float32, func(p plan) { mapWordsBulk(p, float16.Float16.Float32, float16sToFloat32s) })
	register(core.Float32, core.BFloat16, func(p plan) { mapWordsBulk(p, core.BF16FromFloat32, float32sToBF16s) })
	register(core.BFloat16, core.Float32, func(p plan) { mapWordsBulk(p, core.BF16.Float32, bf16sToFloat32s) })
	// from float64, round once: to odd in float32 first, which the final rounding cannot undo
	register(core.Float64, core.Float16, func(p plan) {
		mapWords(p, func(f float64) float16.Float16 { return toFloat16(roundToOdd32(f)) })
	})
	register(core.Float64, core.BFloat16, func(p plan) {
		mapWords(p, func(f float64) core.BF16 { return core.BF16FromFloat32(roundToOdd32(f)) })
	})
}

// toFloat16 converts f to the nearest float16, ties to even, with the same bits as
// float16.Fromfloat32 (NaNs keep their sign and top payload bits and become quiet). The common
// case, a float16 normal number, is a few integer operations that inline into the kernel's loop.
func toFloat16(f float32) float16.Float16 {
	u := math.Float32bits(f)
	if a := u & 0x7fffffff; a-0x38800000 < 0x47800000-0x38800000 { // 2^-14 ≤ |f| < 65536
		// rebias the exponent from 127 to 15 and round off 13 mantissa bits to nearest even; a
		// carry out of the mantissa bumps the exponent, and past 65504 reaches Inf (0x7c00)
		a = a - (127-15)<<23 + 0xfff + (a>>13)&1
		return float16.Frombits(uint16(u>>16)&0x8000 | uint16(a>>13))
	}
	return toFloat16Rare(u)
}

// toFloat16Rare converts the float32 bits u outside float16's normal range: overflow, Inf,
// NaN, subnormals and zero. It is kept out of line so that toFloat16 stays small enough to
// inline.
//
//go:noinline
func toFloat16Rare(u uint32) float16.Float16 {
	sign := uint16(u>>16) & 0x8000
	a := u & 0x7fffffff
	switch {
	case a > 0x7f800000: // NaN
		return float16.Frombits(sign | 0x7e00 | uint16(a>>13)&0x3ff)
	case a >= 0x47800000: // |f| ≥ 65536 or Inf
		return float16.Frombits(sign | 0x7c00)
	}
	// Below 2^-14. Adding 0.5 aligns |f| to float32's unit at 0.5, 2^-24, which is the float16
	// subnormal unit: the float32 addition rounds to nearest even, and the low bits are the result.
	r := math.Float32frombits(a) + 0.5
	return float16.Frombits(sign | uint16(math.Float32bits(r)-0x3f000000))
}

// roundToOdd32 converts f to float32, rounding toward zero and setting the last bit when the
// result is inexact ("round to odd"). Rounding that again to a format with at least two bits
// fewer (float16, bfloat16) gives the correctly rounded result of f, which float32(f) followed by
// a second rounding to nearest does not always.
func roundToOdd32(f float64) float32 {
	r := float32(f)
	if float64(r) == f || f != f {
		return r
	}
	u := math.Float32bits(r)
	if math.Abs(float64(r)) > math.Abs(f) {
		u-- // r was rounded away from zero (possibly to Inf): step back toward zero
	}
	return math.Float32frombits(u | 1)
}

// castFloat32ToFloat16 is the float32 → float16 kernel: F16C for contiguous rows where the CPU
// has it, toFloat16 inlined in tight loops elsewhere.
func castFloat32ToFloat16(p plan) {
	dst, src, d0, s0 := spansOf[uint16, float32](p)
	last := len(p.shape) - 1
	n, dstep, sstep := p.shape[last], p.ds[last], p.ss[last]
	forEachRow(p, d0, s0, func(d, s int64) {
		if dstep == 1 && sstep == 1 {
			float32sToFloat16s(dst[d:d+n], src[s:s+n])
			return
		}
		for range n {
			dst[d] = toFloat16(src[s]).Bits()
			d += dstep
			s += sstep
		}
	})
}

// float32sToFloat16s converts a contiguous row: with F16C, where the CPU has it, 8 or 16 at a
// time (rowKernel, kernels_amd64.s), and the rest with toFloat16 inlined in a tight loop.
func float32sToFloat16s(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	k := 0
	if haveF16C && len(src) >= 8 {
		k = rowKernel(dst, src, cvtFloat32ToFloat16, cvtFloat32ToFloat16NT, 16,
			func(f float32) uint16 { return toFloat16(f).Bits() })
	}
	for i := k; i < len(src); i++ {
		dst[i] = toFloat16(src[i]).Bits()
	}
}

// float16sToFloat32s converts a contiguous row: with F16C, where the CPU has it, all but at most
// the last 7 elements (rowKernel; it returns how many it did), else all of them in a loop the
// compiler can inline into. The bits are those of float16.Float32, NaNs included (both make
// them quiet and keep the payload).
func float16sToFloat32s(dst []float32, src []float16.Float16) int {
	dst = dst[:len(src)]
	if haveF16C && len(src) >= 8 {
		return rowKernel(dst, src,
			func(d *float32, s *float16.Float16, n int) { cvtFloat16ToFloat32(d, (*uint16)(unsafe.Pointer(s)), n) },
			func(d *float32, s *float16.Float16, n int) { cvtFloat16ToFloat32NT(d, (*uint16)(unsafe.Pointer(s)), n) },
			8, float16.Float16.Float32)
	}
	for i, h := range src {
		dst[i] = h.Float32()
	}
	return len(src)
}

// float32sToBF16s and bf16sToFloat32s convert a contiguous row in loops the conversions inline
// into (mapWords calls its function once per element).
func float32sToBF16s(dst []core.BF16, src []float32) int {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = core.BF16FromFloat32(f)
	}
	return len(src)
}

func bf16sToFloat32s(dst []float32, src []core.BF16) int {
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = b.Float32()
	}
	return len(src)
}

// spansOf returns the plan's destination and source spans as slices of D and S, with the index
// of each first element.
func spansOf[D, S any](p plan) (dst []D, src []S, d0, s0 int64) {
	var d D
	var s S
	dsize, ssize := int64(unsafe.Sizeof(d)), int64(unsafe.Sizeof(s))
	dst = unsafe.Slice((*D)(unsafe.Add(p.dst, p.dlo)), p.dlen/dsize)
	src = unsafe.Slice((*S)(unsafe.Add(p.src, p.slo)), p.slen/ssize)
	return dst, src, -p.dlo / dsize, -p.slo / ssize
}

func register(src, dst core.DLDataType, f castFunc) { casts[[2]core.DLDataType{src, dst}] = f }

func fromReal[S number]() {
	toInt[S, int8]()
	toInt[S, int16]()
	toInt[S, int32]()
	toInt[S, int64]()
	toInt[S, uint8]()
	toInt[S, uint16]()
	toInt[S, uint32]()
	toInt[S, uint64]()
	toReal[S, float32]()
	toReal[S, float64]()
}

func toReal[S, D number]() {
	if src, dst := core.DTypeOf[S](), core.DTypeOf[D](); src != dst {
		register(src, dst, func(p plan) { mapWordsBulk(p, func(s S) D { return D(s) }, convertRow[S, D]) })
	}
}

// toInt registers S → D for an integer D: floats by floatToInt, integers wrapping.
func toInt[S number, D integer]() {
	src, dst := core.DTypeOf[S](), core.DTypeOf[D]()
	switch {
	case src == dst:
	case src.Code == core.CodeFloat:
		register(src, dst, func(p plan) { mapWordsBulk(p, func(s S) D { return floatToInt[D](float64(s)) }, floatRowToInt[S, D]) })
	default:
		register(src, dst, func(p plan) { mapWordsBulk(p, func(s S) D { return D(s) }, convertRow[S, D]) })
	}
}

type integer interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// floatToInt is the one rule for every float → integer conversion of this package, whatever
// the float's width: truncation toward zero, NaN → 0, and values beyond the integer's range
// (±Inf included) saturate to its minimum or maximum. Go leaves such conversions to the
// hardware, which gives different answers for different widths and processors.
func floatToInt[D integer](f float64) D {
	var zero D
	minusOne := zero - 1
	signed := minusOne < zero
	bits := 8 * int(unsafe.Sizeof(zero))
	var lo, hi float64 // hi is one past the maximum: 2^(bits-1) or 2^bits, exact in a float64
	if signed {
		lo, hi = -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	} else {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	switch {
	case f != f: // NaN
		return 0
	case f >= hi:
		if signed {
			return ^(D(1) << (bits - 1)) // max
		}
		return minusOne // max
	case f <= lo:
		if signed {
			return D(1) << (bits - 1) // min
		}
		return 0
	}
	return D(f)
}

// convertRow converts a contiguous row with Go's conversion in a loop of its own (mapWords
// calls its function once per element); float64 ↔ float32 go through AVX where the CPU has it,
// with the same bits.
func convertRow[S, D number](dst []D, src []S) int {
	dst = dst[:len(src)]
	k := 0
	if haveStrip32 && len(src) >= 8 {
		switch s := any(src).(type) {
		case []float64:
			if d, ok := any(dst).([]float32); ok {
				k = rowKernel(d, s, cvtFloat64ToFloat32, cvtFloat64ToFloat32NT, 16, func(f float64) float32 { return float32(f) })
			}
		case []float32:
			if d, ok := any(dst).([]float64); ok {
				k = rowKernel(d, s, cvtFloat32ToFloat64, cvtFloat32ToFloat64NT, 8, func(f float32) float64 { return float64(f) })
			}
		}
	}
	for i := k; i < len(src); i++ {
		dst[i] = D(src[i])
	}
	return len(src)
}

// rowKernel runs a conversion kernel over the longest prefix of src that it takes and returns
// the prefix's length; the caller converts the rest. A row whose source and result take cachedMax
// or more together goes to nt (non-temporal stores, multiples of ntUnit elements) from the first
// 32-byte aligned element of dst, one converting the elements before it: its result goes to
// memory without its lines first being read into the cache. Other rows go to plain, 8 elements at
// a time, and leave their result in the cache for the next reader. The threshold is where
// non-temporal stores won in BenchmarkCast* (figures in docs/benchmarks-history.md): large
// casts gain because their result would evict the source they still read, and cold runs gain
// most; below it ordinary stores win, since the next reader then finds the result in the cache.
func rowKernel[S, D any](dst []D, src []S, plain, nt func(*D, *S, int), ntUnit int, one func(S) D) int {
	var d D
	var s S
	size := unsafe.Sizeof(d)
	addr := uintptr(unsafe.Pointer(&dst[0]))
	// foreign memory may hold elements off their natural alignment: never 32-byte aligned then
	if len(src)*int(size+unsafe.Sizeof(s)) < cachedMax || addr%size != 0 {
		n := len(src) &^ 7
		plain(&dst[0], &src[0], n)
		return n
	}
	head := min(int((-addr&31)/size), len(src))
	for i := range head {
		dst[i] = one(src[i])
	}
	n := (len(src) - head) / ntUnit * ntUnit
	if n > 0 {
		nt(&dst[head], &src[head], n)
	}
	return head + n
}

// floatRowToInt converts a contiguous row of floats to integers by floatToInt, in a loop of its
// own.
func floatRowToInt[S number, D integer](dst []D, src []S) int {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = floatToInt[D](float64(v))
	}
	return len(src)
}

// mapWords applies f to every element of the plan's source and stores the result in the
// destination.
func mapWords[S, D any](p plan, f func(S) D) { mapWordsBulk(p, f, nil) }

// mapWordsBulk is mapWords with a faster path for contiguous rows: bulk, if not nil, converts a
// prefix of each such row itself and returns its length; f does the rest.
func mapWordsBulk[S, D any](p plan, f func(S) D, bulk func(dst []D, src []S) int) {
	var s S
	var d D
	dst := unsafe.Slice((*D)(unsafe.Add(p.dst, p.dlo)), p.dlen/int64(unsafe.Sizeof(d)))
	src := unsafe.Slice((*S)(unsafe.Add(p.src, p.slo)), p.slen/int64(unsafe.Sizeof(s)))
	d0, s0 := -p.dlo/int64(unsafe.Sizeof(d)), -p.slo/int64(unsafe.Sizeof(s))
	last := len(p.shape) - 1
	n, dstep, sstep := p.shape[last], p.ds[last], p.ss[last]
	forEachRow(p, d0, s0, func(di, si int64) {
		if dstep == 1 && sstep == 1 {
			dr, sr := dst[di:di+n], src[si:si+n]
			k := 0
			if bulk != nil {
				k = bulk(dr, sr)
			}
			for i := k; i < len(sr); i++ {
				dr[i] = f(sr[i])
			}
			return
		}
		for i := int64(0); i < n; i++ {
			dst[di+i*dstep] = f(src[si+i*sstep])
		}
	})
}

// castInto converts between dtypes, by a direct kernel when there is one, else through a
// general scalar (complex128 for floating and complex types, int64/uint64 for integers).
func castInto(p plan, dst, src core.DLDataType) error {
	if f, ok := casts[[2]core.DLDataType{src, dst}]; ok {
		f(p)
		return nil
	}
	load, ok1 := loaders[src]
	store, ok2 := storers[dst]
	if !ok1 || !ok2 {
		return errs.Errorf(ErrUnsupported, "memory: no cast from %s to %s", src, dst)
	}
	ssize, dsize := int64(src.Size()), int64(dst.Size())
	dspan := unsafe.Slice((*byte)(unsafe.Add(p.dst, p.dlo)), p.dlen)
	sspan := unsafe.Slice((*byte)(unsafe.Add(p.src, p.slo)), p.slen)
	last := len(p.shape) - 1
	n, dstep, sstep := p.shape[last], p.ds[last], p.ss[last]
	forEachRow(p, -p.dlo/dsize, -p.slo/ssize, func(d, s int64) {
		for i := int64(0); i < n; i++ {
			so, do := (s+i*sstep)*ssize, (d+i*dstep)*dsize
			store(dspan[do:do+dsize], load(sspan[so:so+ssize]))
		}
	})
	return nil
}

// scalar is any element on its way between two dtypes.
type scalar struct {
	c        complex128 // floating and complex values
	i        int64      // signed integer sources
	u        uint64     // unsigned integer sources (i and u hold the same bits)
	integral bool       // set for integer and bool sources: i and u are exact, c is not used
}

func fromFloat(f float64) scalar { return scalar{c: complex(f, 0)} }

func fromInt(i int64) scalar {
	return scalar{c: complex(float64(i), 0), i: i, u: uint64(i), integral: true}
}

func fromUint(u uint64) scalar {
	return scalar{c: complex(float64(u), 0), i: int64(u), u: u, integral: true}
}

// toFloat32 rounds s's real part to the nearest float32. An integer is rounded from its own
// value: through float64 (s.c), a 64-bit integer with more than 53 significant bits would be
// rounded twice, which can land on the wrong side of a tie.
func toFloat32(s scalar) float32 {
	switch {
	case !s.integral:
		return float32(real(s.c))
	case real(s.c) < 0:
		return float32(s.i)
	}
	return float32(s.u)
}

// toOdd32 is roundToOdd32 of s's real part, for the final rounding to float16 or bfloat16. An
// integer is rounded to odd from its own value (see toFloat32): its top 24 significant bits, the
// last set when any bit below them is.
func toOdd32(s scalar) float32 {
	if !s.integral {
		return roundToOdd32(real(s.c))
	}
	neg := real(s.c) < 0
	m := s.u
	if neg {
		m = -s.u // the magnitude, 2^63 for math.MinInt64 included
	}
	if n := bits.Len64(m); n > 24 {
		sh := n - 24
		odd := m&(1<<sh-1) != 0
		m >>= sh
		if odd {
			m |= 1
		}
		m <<= sh
	}
	f := float32(m) // exact: at most 24 significant bits
	if neg {
		f = -f
	}
	return f
}

// storeInt stores an integer source wrapped to D, a float source by floatToInt.
func storeInt[D integer](b []byte, s scalar) {
	if s.integral {
		*ptr[D](b) = D(s.u) // the low bits: wraps, whatever the signs
		return
	}
	*ptr[D](b) = floatToInt[D](real(s.c))
}

func ptr[T any](b []byte) *T { return (*T)(unsafe.Pointer(unsafe.SliceData(b))) }

var loaders = map[core.DLDataType]func([]byte) scalar{
	core.Bool: func(b []byte) scalar {
		if b[0] != 0 {
			return fromInt(1)
		}
		return fromInt(0)
	},
	core.Int8:       func(b []byte) scalar { return fromInt(int64(*ptr[int8](b))) },
	core.Int16:      func(b []byte) scalar { return fromInt(int64(*ptr[int16](b))) },
	core.Int32:      func(b []byte) scalar { return fromInt(int64(*ptr[int32](b))) },
	core.Int64:      func(b []byte) scalar { return fromInt(*ptr[int64](b)) },
	core.Uint8:      func(b []byte) scalar { return fromUint(uint64(b[0])) },
	core.Uint16:     func(b []byte) scalar { return fromUint(uint64(*ptr[uint16](b))) },
	core.Uint32:     func(b []byte) scalar { return fromUint(uint64(*ptr[uint32](b))) },
	core.Uint64:     func(b []byte) scalar { return fromUint(*ptr[uint64](b)) },
	core.Float16:    func(b []byte) scalar { return fromFloat(float64(ptr[float16.Float16](b).Float32())) },
	core.BFloat16:   func(b []byte) scalar { return fromFloat(float64(ptr[core.BF16](b).Float32())) },
	core.Float32:    func(b []byte) scalar { return fromFloat(float64(*ptr[float32](b))) },
	core.Float64:    func(b []byte) scalar { return fromFloat(*ptr[float64](b)) },
	core.Complex64:  func(b []byte) scalar { return fromComplex(complex128(*ptr[complex64](b))) },
	core.Complex128: func(b []byte) scalar { return fromComplex(*ptr[complex128](b)) },
}

func fromComplex(c complex128) scalar {
	s := fromFloat(real(c))
	s.c = c
	return s
}

var storers = map[core.DLDataType]func([]byte, scalar){
	core.Bool: func(b []byte, s scalar) {
		b[0] = 0
		if s.c != 0 || (s.integral && s.u != 0) {
			b[0] = 1
		}
	},
	core.Int8:     storeInt[int8],
	core.Int16:    storeInt[int16],
	core.Int32:    storeInt[int32],
	core.Int64:    storeInt[int64],
	core.Uint8:    storeInt[uint8],
	core.Uint16:   storeInt[uint16],
	core.Uint32:   storeInt[uint32],
	core.Uint64:   storeInt[uint64],
	core.Float16:  func(b []byte, s scalar) { *ptr[float16.Float16](b) = toFloat16(toOdd32(s)) },
	core.BFloat16: func(b []byte, s scalar) { *ptr[core.BF16](b) = core.BF16FromFloat32(toOdd32(s)) },
	core.Float32:  func(b []byte, s scalar) { *ptr[float32](b) = toFloat32(s) },
	core.Float64:  func(b []byte, s scalar) { *ptr[float64](b) = real(s.c) },
	core.Complex64: func(b []byte, s scalar) {
		if s.integral {
			*ptr[complex64](b) = complex(toFloat32(s), 0)
			return
		}
		*ptr[complex64](b) = complex64(s.c)
	},
	core.Complex128: func(b []byte, s scalar) { *ptr[complex128](b) = s.c },
}
