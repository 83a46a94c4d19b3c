//go:build cgo

package cdlpack_test

import (
	"testing"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/core/cdlpack"
)

// BenchmarkRoundTrip measures one ExportVersioned + ImportVersioned + Release (the deleter call
// through C and back into Go) of a 1 MiB tensor; the cost does not depend on the size.
func BenchmarkRoundTrip(b *testing.B) {
	x := core.MustFromSlice(make([]float32, 1<<18), 512, 512)
	b.ReportAllocs()
	for b.Loop() {
		m, err := cdlpack.ExportVersioned(x)
		if err != nil {
			b.Fatal(err)
		}
		y, err := cdlpack.ImportVersioned(m)
		if err != nil {
			b.Fatal(err)
		}
		y.Release()
	}
}

// BenchmarkExportDelete measures ExportVersioned followed by the consumer's deleter call.
func BenchmarkExportDelete(b *testing.B) {
	x := core.MustFromSlice(make([]float32, 1<<18), 512, 512)
	b.ReportAllocs()
	for b.Loop() {
		m, err := cdlpack.ExportVersioned(x)
		if err != nil {
			b.Fatal(err)
		}
		cdlpack.DeleteVersioned(m)
	}
}
