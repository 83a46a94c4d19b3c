package arrowx

import (
	"fmt"
	"math"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
)

// fillKey is the key of FillNulls's setting in adapters.Options.
type fillKey struct{}

// FillNulls lets FromArray and FromRecord convert arrays with nulls: the result is a copy in
// which every null (at any list level: a null list fills all its elements) holds v. Without it,
// arrays with nulls are refused with ErrNulls. Arrays without nulls are unaffected (and still
// shared). v must be a value of the array's dtype (an integer in range for an integer dtype, 0
// or 1 for bool, a value float16 holds exactly for float16, ...; NaN for any float dtype):
// any other is refused with an error wrapping adapters.ErrCast, unless adapters.AllowCast() is
// also given, which converts it as memory.Copy converts (truncated toward zero and saturated
// for integers, v != 0 for bool, rounded for floats).
func FillNulls(v float64) adapters.Option { return adapters.WithExtra(fillKey{}, v) }

func fillOf(o adapters.Options) (float64, bool) {
	v, ok := o.Extra(fillKey{})
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}

// fillError refuses a fill value that dtype does not hold exactly; it matches adapters.ErrCast.
type fillError struct {
	fill float64
	dt   core.DLDataType
	got  string
}

func (e *fillError) Error() string {
	return fmt.Sprintf("arrowx: fill value %v is not a %s value (filling with it would store %s): "+
		"pass adapters.AllowCast() to fill with it", e.fill, e.dt, e.got)
}

func (e *fillError) Is(target error) bool { return target == adapters.ErrCast }

// checkFill refuses, unless o allows casts, a fill value that dtype dt cannot hold exactly.
func checkFill(fill float64, dt core.DLDataType, o adapters.Options) error {
	if o.Cast || (math.IsNaN(fill) && (dt.Code == core.CodeFloat || dt.Code == core.CodeBfloat || dt.Code == core.CodeComplex)) {
		return nil
	}
	in := core.Scalar(fill)
	out, err := memory.Cast(in, dt)
	if err != nil {
		return wrapf(err, "fill value %v for %s", fill, dt)
	}
	defer out.Release()
	back, err := memory.Cast(out, core.Float64)
	if err != nil {
		return wrapf(err, "fill value %v for %s", fill, dt)
	}
	defer back.Release()
	got, err := core.At[float64](back)
	if err != nil {
		return err
	}
	// an integer dtype's limits as float64 are not always its values (2^63 saturates to
	// MaxInt64, which rounds back to 2^63): check the range on the integer itself
	exact := got == fill
	switch dt.Code {
	case core.CodeInt:
		exact = exact && fill >= -math.Ldexp(1, int(dt.Bits)-1) && fill < math.Ldexp(1, int(dt.Bits)-1)
	case core.CodeUInt:
		exact = exact && fill >= 0 && fill < math.Ldexp(1, int(dt.Bits))
	}
	if exact {
		return nil
	}
	return &fillError{fill: fill, dt: dt, got: fmt.Sprint(got)}
}
