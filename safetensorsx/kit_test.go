package safetensorsx_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/adapters/adaptertest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// kitDTypes are the dtypes of the format whose elements are whole bytes (the kit builds its
// cases element by element; sub-byte dtypes are covered by the reference tests).
func kitDTypes(t *testing.T) []core.DLDataType {
	var out []core.DLDataType
	for _, dt := range allDTypes(t) {
		if !dt.SubByte() {
			out = append(out, dt)
		}
	}
	return out
}

// TestConformance runs the adapters conformance kit over a Write + Read round trip: every
// dtype, rank and layout the kit generates is written and read back. It always copies.
func TestConformance(t *testing.T) {
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "safetensorsx.Write+Read",
		DTypes: kitDTypes(t),
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			o := adapters.Apply(opts...)
			if _, err := o.Choose(false, "a safetensors round trip writes and reads bytes"); err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			if err := safetensorsx.Write(&buf, map[string]*core.Tensor{"x": x}, nil); err != nil {
				return nil, err
			}
			m, err := safetensorsx.Read(&buf)
			if err != nil {
				return nil, err
			}
			o.Report(true)
			return m["x"], nil
		},
	})
}

// TestConformanceMap runs the kit over WriteFile and Map: the result is a view of a mapping of
// its own (so the kit's lifetime check sees mappings come and go) and never shares the input.
func TestConformanceMap(t *testing.T) {
	dir := t.TempDir()
	n := 0
	adaptertest.Run(t, adaptertest.Adapter{
		Name:   "safetensorsx.WriteFile+Map",
		DTypes: kitDTypes(t),
		RoundTrip: func(x *core.Tensor, opts ...adapters.Option) (*core.Tensor, error) {
			o := adapters.Apply(opts...)
			if _, err := o.Choose(false, "a file round trip writes the elements to disk"); err != nil {
				return nil, err
			}
			n++
			path := filepath.Join(dir, fmt.Sprintf("x%d.safetensors", n))
			if err := safetensorsx.WriteFile(path, map[string]*core.Tensor{"x": x}, nil); err != nil {
				return nil, err
			}
			m, err := safetensorsx.Map(path)
			if err != nil {
				return nil, err
			}
			o.Report(true)
			return m["x"], nil
		},
	})
}
