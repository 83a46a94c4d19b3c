package arrowx

import "github.com/dlpack-go/dlpack/adapters"

// fillKey is the key of FillNulls's setting in adapters.Options.
type fillKey struct{}

// FillNulls lets FromArray and FromRecord convert arrays with nulls: the result is a copy in
// which every null (at any list level: a null list fills all its elements) holds v, converted to
// the dtype as adapters.Copy converts (for bool, v != 0). Without it, arrays with nulls are
// refused with ErrNulls. Arrays without nulls are unaffected (and still shared).
func FillNulls(v float64) adapters.Option { return adapters.WithExtra(fillKey{}, v) }

func fillOf(o adapters.Options) (float64, bool) {
	v, ok := o.Extra(fillKey{})
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}
