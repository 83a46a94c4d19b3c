package adapters_test

import (
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCopyOptionsContract(t *testing.T) {
	tests := []struct {
		name      string
		opts      []adapters.Option
		shareable bool
		wantCopy  bool
		wantErr   error
	}{
		{"default shares when it can", nil, true, false, nil},
		{"default copies when it must", nil, false, true, nil},
		{"ZeroCopyOnly shares", []adapters.Option{adapters.ZeroCopyOnly()}, true, false, nil},
		{"ZeroCopyOnly refuses a copy", []adapters.Option{adapters.ZeroCopyOnly()}, false, false, adapters.ErrCopyRequired},
		{"AlwaysCopy copies shareable", []adapters.Option{adapters.AlwaysCopy()}, true, true, nil},
		{"AlwaysCopy copies the rest", []adapters.Option{adapters.AlwaysCopy()}, false, true, nil},
		{"last policy wins", []adapters.Option{adapters.AlwaysCopy(), adapters.WithCopy(adapters.CopyIfNeeded)}, true, false, nil},
		{"nil options are ignored", []adapters.Option{nil}, true, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			copied := !tt.wantCopy
			o := adapters.Apply(append(tt.opts, adapters.ReportCopy(&copied))...)
			got, err := o.Decide(tt.shareable, "strides are not C order")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "strides are not C order")
				assert.Equal(t, !tt.wantCopy, copied, "Copied must not change on error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCopy, got)
			assert.Equal(t, tt.wantCopy, copied)
		})
	}
	assert.Equal(t, adapters.CopyIfNeeded, adapters.Apply().Policy)
	assert.Nil(t, adapters.Apply().Copied)
	adapters.Apply().Report(true) // no ReportCopy: nothing to store, no panic
	for p, s := range map[adapters.CopyPolicy]string{adapters.CopyIfNeeded: "copy-if-needed",
		adapters.CopyNever: "copy-never", adapters.CopyAlways: "copy-always", adapters.CopyPolicy(7): "CopyPolicy(7)"} {
		assert.Equal(t, s, p.String())
	}
}

// Share's copy under AlwaysCopy can fail (a released tensor, device memory); ReportCopy must not
// then say that a copy was made.
func TestShareReportsNoCopyOnError(t *testing.T) {
	released := core.MustNew(core.Float32, 2)
	released.Release()
	buf := make([]float32, 2)
	cuda, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: core.CUDA},
		DType: core.Float32, Shape: []int64{2}}, nil)
	require.NoError(t, err)
	for name, x := range map[string]*core.Tensor{"released": released, "device": cuda} {
		copied := false
		_, err := adapters.Share(x, adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
		require.Error(t, err, name)
		assert.False(t, copied, "%s: ReportCopy said copied after the copy failed", name)
	}
	copied := true
	x := core.MustNew(core.Float32, 2)
	got, err := adapters.Share(x, adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.Same(t, x, got)
	assert.False(t, copied)
	got, err = adapters.Share(core.MustNew(core.Float32, 2), adapters.AlwaysCopy(), adapters.ReportCopy(&copied))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.NotZero(t, got.Flags()&core.FlagIsCopied)
}
