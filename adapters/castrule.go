package adapters

import (
	"errors"
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrCast is wrapped by every error of a conversion that would have to cast elements in a way
// that can change a value (narrowing a float, dropping an imaginary part, float to integer,
// int64 to float64, ...) and was not given AllowCast. The error is a *CastError, which names
// both dtypes and the option.
var ErrCast = errors.New("adapters: cast would change values")

// CastError says that a conversion needs a cast that can change values, which only AllowCast
// permits. errors.Is matches it with ErrCast, and with Also when that is set.
type CastError struct {
	From, To core.DLDataType
	// Target names what holds To ("*mat.Dense", `input "X"`); "the target" when empty.
	Target string
	// Also is a sentinel of the adapter's own that the error matches too (onnxx.ErrDType, say),
	// or nil.
	Also error
}

// Error reads "tensor is complex128, *mat.Dense holds float64: casting would drop the imaginary
// part (pass adapters.AllowCast() to cast)".
func (e *CastError) Error() string {
	target := e.Target
	if target == "" {
		target = "the target"
	}
	return fmt.Sprintf("tensor is %s, %s holds %s: casting would %s (pass adapters.AllowCast() to cast)",
		e.From, target, e.To, CastLoss(e.From, e.To))
}

// Is matches ErrCast and Also.
func (e *CastError) Is(target error) bool {
	return target == ErrCast || (e.Also != nil && target == e.Also)
}

// CheckCast reports whether a conversion may turn elements of dtype from into dtype to: it
// returns nil when they are the same, when the cast preserves every value (Preserves), or when
// the caller passed AllowCast; otherwise a *CastError (wrapping ErrCast) naming both dtypes and
// what holds to (target, which may be empty). A dtype outside the rule's table (vectors,
// sub-byte and float8 types, bcomplex) is refused with ErrUnsupported whatever the options.
// An adapter calls it before it casts, and casts with Cast, a copy that it reports like any
// other.
func (o Options) CheckCast(from, to core.DLDataType, target string) error {
	if from == to {
		return nil
	}
	if kindOf(from).kind == 0 || kindOf(to).kind == 0 {
		return errs.Errorf(ErrUnsupported, "no cast between %s and %s", from, to)
	}
	if o.Cast || Preserves(from, to) {
		return nil
	}
	return &CastError{From: from, To: to, Target: target}
}

// numberKind describes a dtype for the cast rule: an integer's range, or a binary float's
// precision and exponent range (a complex dtype by those of its parts).
type numberKind struct {
	kind   byte // 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex, 0 unknown
	bits   int  // integers: value bits (the sign excluded); floats: significand digits
	emax   int  // floats: the largest exponent
	minSub int  // floats: the exponent of the smallest subnormal
}

func kindOf(d core.DLDataType) numberKind {
	if d.Lanes != 1 {
		return numberKind{}
	}
	switch {
	case d == core.Bool:
		return numberKind{kind: 'b', bits: 1}
	case d.Code == core.CodeInt && (d.Bits == 8 || d.Bits == 16 || d.Bits == 32 || d.Bits == 64):
		return numberKind{kind: 'i', bits: int(d.Bits) - 1}
	case d.Code == core.CodeUInt && (d.Bits == 8 || d.Bits == 16 || d.Bits == 32 || d.Bits == 64):
		return numberKind{kind: 'u', bits: int(d.Bits)}
	case d == core.Float16:
		return numberKind{kind: 'f', bits: 11, emax: 15, minSub: -24}
	case d == core.BFloat16:
		return numberKind{kind: 'f', bits: 8, emax: 127, minSub: -133}
	case d == core.Float32:
		return numberKind{kind: 'f', bits: 24, emax: 127, minSub: -149}
	case d == core.Float64:
		return numberKind{kind: 'f', bits: 53, emax: 1023, minSub: -1074}
	case d == core.Complex64:
		k := kindOf(core.Float32)
		k.kind = 'c'
		return k
	case d == core.Complex128:
		k := kindOf(core.Float64)
		k.kind = 'c'
		return k
	}
	return numberKind{}
}

// Preserves reports whether every value of dtype from is exactly a value of dtype to, so that
// a conversion may cast from → to by default (a copy, reported as one). It is the table below;
// every other pair, and every dtype it does not know, needs AllowCast.
//
//	from                          to
//	bool                          every integer, float and complex dtype
//	int8, int16, int32            a wider signed integer
//	uint8, uint16, uint32         a wider unsigned integer, or a signed one wider than from
//	int8, uint8                   float16, bfloat16 (and everything float32 takes)
//	int16, uint16                 float32, complex64 (and everything float64 takes)
//	int32, uint32                 float64, complex128
//	float16, bfloat16             float32, float64, complex64, complex128
//	float32                       float64, complex64, complex128
//	float64                       complex128
//	complex64                     complex128
//
// It is NumPy's can_cast(from, to, "safe") with bfloat16 added, less the pairs NumPy calls
// safe that change values: int64 and uint64 to float64 (2^53 + 1 is not a float64), and int64
// to float32. Anything to bool, complex to real, float to integer, narrower floats, int64 or
// uint64 to any float, and signed to unsigned (or unsigned to signed of the same width) are not
// in it: under AllowCast they are converted as Cast does (see Copy for the rules).
func Preserves(from, to core.DLDataType) bool {
	if from == to {
		return true
	}
	f, t := kindOf(from), kindOf(to)
	if f.kind == 0 || t.kind == 0 {
		return false
	}
	switch f.kind {
	case 'b':
		return t.kind != 'b'
	case 'i':
		switch t.kind {
		case 'i':
			return t.bits >= f.bits
		case 'f', 'c':
			return f.bits <= t.bits
		}
	case 'u':
		switch t.kind {
		case 'u', 'i':
			return t.bits >= f.bits
		case 'f', 'c':
			return f.bits <= t.bits
		}
	case 'f', 'c':
		holds := t.bits >= f.bits && t.emax >= f.emax && t.minSub <= f.minSub
		return holds && (t.kind == 'c' || f.kind == 'f' && t.kind == 'f')
	}
	return false
}

// CastLoss says in a few words what casting from → to can do to a value ("drop the imaginary
// part", "round values above 2^53"), for the message of an error that refuses the cast.
func CastLoss(from, to core.DLDataType) string {
	f, t := kindOf(from), kindOf(to)
	switch {
	case Preserves(from, to):
		return "keep every value"
	case f.kind == 0 || t.kind == 0:
		return fmt.Sprintf("reinterpret %s as %s", from, to)
	case t.kind == 'b':
		return "turn every nonzero value into true"
	case f.kind == 'c' && t.kind != 'c':
		return "drop the imaginary part"
	case (f.kind == 'f' || f.kind == 'c') && (t.kind == 'i' || t.kind == 'u'):
		return "truncate fractions, saturate out-of-range values and turn NaN into 0"
	case (f.kind == 'i' || f.kind == 'u') && (t.kind == 'f' || t.kind == 'c'):
		return fmt.Sprintf("round integers above 2^%d", t.bits)
	case f.kind == 'i' && t.kind == 'u':
		return "wrap negative values"
	case f.kind == 'u' && t.kind == 'i' && t.bits < f.bits:
		return fmt.Sprintf("wrap values above 2^%d-1", t.bits)
	case (f.kind == 'i' || f.kind == 'u') && t.bits < f.bits:
		return "wrap values out of range"
	case f.bits > t.bits && f.emax > t.emax:
		return "round values to fewer digits and overflow large ones to infinity"
	case f.bits > t.bits:
		return "round values to fewer digits"
	}
	return "overflow large values to infinity and flush small ones"
}
