package pyexchange

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeFuncRefuses(t *testing.T) {
	type point struct{ X int }
	cases := []struct {
		name string
		fn   any
		want string
	}{
		{"nil", nil, "want a non-nil func"},
		{"nil_func", (func() error)(nil), "want a non-nil func"},
		{"not_func", 3, "want a non-nil func"},
		{"no_error", func(x *core.Tensor) {}, "last result of func(*core.Tensor) must be error"},
		{"error_first", func() (error, int) { return nil, 0 }, "must be error"},
		{"variadic", func(xs ...int) error { return nil }, "variadic"},
		{"slice_param", func(xs []float64) error { return nil }, "parameter 0 has type []float64"},
		{"struct_param", func(p point) error { return nil }, "parameter 0 has type pyexchange.point"},
		{"tensor_value", func(t core.Tensor) error { return nil }, "parameter 0 has type core.Tensor"},
		{"complex_param", func(c complex128) error { return nil }, "parameter 0 has type complex128"},
		{"map_result", func() (map[string]int, error) { return nil, nil }, "result 0 has type map[string]int"},
		{"9", func() error { return nil }, "not a Python identifier"},
		{"_private", func() error { return nil }, "not a Python identifier"},
		{"class", func() error { return nil }, "not a Python identifier"},
		{"dash-name", func() error { return nil }, "not a Python identifier"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := describeFunc(c.name, c.fn, "")
			require.ErrorIs(t, err, ErrRegister)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestDescribeFuncKindsAndNames(t *testing.T) {
	fn := func(x *core.Tensor, a int8, b uint32, c float32, d bool, e string, f uintptr) (*core.Tensor, float64, string, error) {
		return x, 0, "", nil
	}
	f, err := describeFunc("mix", fn, "mix(x, a, b, c, d, e, f)\n\nEverything.")
	require.NoError(t, err)
	var kinds, names []string
	for _, p := range f.Params {
		kinds, names = append(kinds, p.Kind), append(names, p.Name)
	}
	assert.Equal(t, []string{"tensor", "int", "int", "float", "bool", "str", "int"}, kinds)
	assert.Equal(t, []string{"x", "a", "b", "c", "d", "e", "f"}, names)
	require.Len(t, f.Results, 3)
	assert.Equal(t, "*core.Tensor", f.Results[0].Type)

	for doc, want := range map[string][]string{
		"mix(x, a)\n":                     {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6"}, // wrong count
		"other(x, a, b, c, d, e, f)":      {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6"}, // other name
		"mix(x, a, b, c, d, e, e)":        {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6"}, // duplicate
		"mix(x, a, b, c, d, e, if)":       {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6"}, // keyword
		"mix(x, a, b, c, d, e, _lib)":     {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6"}, // the generated function's
		"mix(_handles, a, b, c, d, e, f)": {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6"},
	} {
		f, err := describeFunc("mix", fn, doc)
		require.NoError(t, err)
		for i, p := range f.Params {
			assert.Equal(t, want[i], p.Name, doc)
		}
	}
}

func TestRegisterTwice(t *testing.T) {
	name := fmt.Sprintf("twice_%p", t)
	name = "twice_" + name[len(name)-6:]
	require.NoError(t, Register(name, func() error { return nil }, ""))
	err := Register(name, func() error { return nil }, "")
	require.ErrorIs(t, err, ErrRegister)
	assert.Contains(t, err.Error(), "already registered")
	assert.Contains(t, Functions(), name)
}

func TestExceptionFor(t *testing.T) {
	mine := errors.New("mine")
	MapError(mine, BufferError)
	for _, c := range []struct {
		err  error
		want Exception
	}{
		{fmt.Errorf("x: %w", core.ErrArgument), ValueError},
		{fmt.Errorf("x: %w", core.ErrShape), ValueError},
		{fmt.Errorf("x: %w", core.ErrDType), TypeError},
		{fmt.Errorf("x: %w", core.ErrTypeMismatch), TypeError},
		{fmt.Errorf("x: %w", adapters.ErrUnsupported), TypeError},
		{fmt.Errorf("x: %w", adapters.Options{}.CheckCast(core.Complex128, core.Float64, "total()")), TypeError},
		{adapters.Options{}.CheckCast(core.Int64, core.Float64, ""), TypeError},
		{fmt.Errorf("x: %w", adapters.ErrCopyRequired), BufferError},
		{fmt.Errorf("x: %w", core.ErrNotHost), BufferError},
		{fmt.Errorf("x: %w", ErrOutOfMemory), MemoryError},
		{fmt.Errorf("x: %w", core.ErrReadOnly), ValueError},
		{fmt.Errorf("x: %w", mine), BufferError},
		{errors.New("plain"), RuntimeError},
	} {
		assert.Equal(t, c.want, ExceptionFor(c.err), "%v", c.err)
	}
	assert.Equal(t, "BufferError", BufferError.String())
}

func TestDirectCallers(t *testing.T) {
	direct := []any{
		func(*core.Tensor) error { return nil },
		func(*core.Tensor, float64) error { return nil },
		func(*core.Tensor, *core.Tensor) error { return nil },
		func(*core.Tensor) (*core.Tensor, error) { return nil, nil },
		func(*core.Tensor, *core.Tensor) (*core.Tensor, error) { return nil, nil },
	}
	for _, fn := range direct {
		f, err := describeFunc("d", fn, "")
		require.NoError(t, err)
		assert.NotNil(t, f.direct, "%T", fn)
	}
	for _, fn := range []any{
		func(*core.Tensor, float32) error { return nil },
		func(*core.Tensor) (float64, error) { return 0, nil },
		func(int) error { return nil },
	} {
		f, err := describeFunc("r", fn, "")
		require.NoError(t, err)
		assert.Nil(t, f.direct, "%T goes through reflect", fn)
	}
	// a direct caller passes the tensors and the float in order, and returns what fn returns
	x := core.MustFromSlice([]float64{1, 2}, 2)
	var got []any
	f, err := describeFunc("d", func(a *core.Tensor, s float64) error {
		got = append(got, a, s)
		return core.ErrArgument
	}, "")
	require.NoError(t, err)
	r, err := f.direct([]*core.Tensor{x}, 2.5)
	assert.Nil(t, r)
	require.ErrorIs(t, err, core.ErrArgument)
	assert.Equal(t, []any{x, 2.5}, got)
}
