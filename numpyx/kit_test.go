package numpyx_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// TestConformance runs the adapters conformance kit over a .npy round trip: every dtype, rank
// and layout the kit generates is written and read back. A file round trip always copies.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "numpyx.Write+Read",
		DTypes: allDTypes,
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			o := adapters.Apply(opts...)
			if _, err := o.Choose(false, "a .npy round trip writes and reads bytes"); err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			if err := numpyx.Write(&buf, x); err != nil {
				return nil, err
			}
			back, err := numpyx.Read(&buf)
			if err != nil {
				return nil, err
			}
			o.Report(true)
			return back, nil
		},
	})
}

// TestConformanceMap runs the kit over a file and a memory map: the result is zero-copy from
// the file but never shares the input's memory, and each result owns a mapping of its own, so
// the kit's lifetime check also sees the mappings come and go.
func TestConformanceMap(t *testing.T) {
	dir := t.TempDir()
	n := 0
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "numpyx.WriteFile+Map",
		DTypes: allDTypes,
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			o := adapters.Apply(opts...)
			if _, err := o.Choose(false, "a file round trip writes the elements to disk"); err != nil {
				return nil, err
			}
			n++ // a fresh file each time: earlier results may still map theirs
			path := filepath.Join(dir, fmt.Sprintf("x%d.npy", n))
			if err := numpyx.WriteFile(path, x); err != nil {
				return nil, err
			}
			back, err := numpyx.Map(path)
			if err != nil {
				return nil, err
			}
			o.Report(true)
			return back, nil
		},
	})
}
