package gopeers_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"codeberg.org/sbinet/npyio"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// benchFile writes a float32 .npy file of the given size into a temporary directory.
func benchFile(b *testing.B, bytes int64) (string, *core.Tensor) {
	b.Helper()
	x := core.MustNew(core.Float32, bytes/4)
	v, err := core.Elements[float32](x)
	require.NoError(b, err)
	for i := range v {
		v[i] = float32(i % 1000)
	}
	path := filepath.Join(b.TempDir(), "bench.npy")
	require.NoError(b, numpyx.WriteFile(path, x))
	return path, x
}

const benchSize = 256 << 20

// BenchmarkRead256MiB reads a 256 MiB float32 .npy file: numpyx, npyio (through a
// bufio.Reader, as it reads element by element), and os.ReadFile of the same file as the floor.
func BenchmarkRead256MiB(b *testing.B) {
	path, _ := benchFile(b, benchSize)
	b.Run("numpyx", func(b *testing.B) {
		b.SetBytes(benchSize)
		b.ReportAllocs()
		for range b.N {
			x, err := numpyx.ReadFile(path)
			require.NoError(b, err)
			require.Equal(b, int64(benchSize/4), x.Len())
		}
	})
	b.Run("npyio", func(b *testing.B) {
		b.SetBytes(benchSize)
		b.ReportAllocs()
		for range b.N {
			f, err := os.Open(path)
			require.NoError(b, err)
			var v []float32
			require.NoError(b, npyio.Read(bufio.NewReader(f), &v))
			f.Close()
			require.Len(b, v, benchSize/4)
		}
	})
	b.Run("os.ReadFile", func(b *testing.B) {
		b.SetBytes(benchSize)
		b.ReportAllocs()
		for range b.N {
			raw, err := os.ReadFile(path)
			require.NoError(b, err)
			require.Greater(b, len(raw), benchSize)
		}
	})
}

// BenchmarkWrite256MiB writes a 256 MiB float32 array: numpyx, npyio (through a bufio.Writer),
// and os.WriteFile of the same bytes as the floor.
func BenchmarkWrite256MiB(b *testing.B) {
	_, x := benchFile(b, benchSize)
	dir := b.TempDir()
	v, err := core.Elements[float32](x)
	require.NoError(b, err)
	b.Run("numpyx", func(b *testing.B) {
		b.SetBytes(benchSize)
		b.ReportAllocs()
		for range b.N {
			require.NoError(b, numpyx.WriteFile(filepath.Join(dir, "a.npy"), x))
		}
	})
	b.Run("npyio", func(b *testing.B) {
		b.SetBytes(benchSize)
		b.ReportAllocs()
		for range b.N {
			f, err := os.Create(filepath.Join(dir, "b.npy"))
			require.NoError(b, err)
			w := bufio.NewWriter(f)
			require.NoError(b, npyio.Write(w, v))
			require.NoError(b, w.Flush())
			require.NoError(b, f.Close())
		}
	})
	raw, err := x.Bytes()
	require.NoError(b, err)
	b.Run("os.WriteFile", func(b *testing.B) {
		b.SetBytes(benchSize)
		b.ReportAllocs()
		for range b.N {
			require.NoError(b, os.WriteFile(filepath.Join(dir, "c.npy"), raw, 0o644))
		}
	})
}

// BenchmarkMapOpen maps a 1 MiB and a 256 MiB file: the cost does not depend on the size.
func BenchmarkMapOpen(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int64
	}{{"1MiB", 1 << 20}, {"256MiB", benchSize}} {
		path, _ := benchFile(b, size.bytes)
		b.Run(size.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				m, err := numpyx.Map(path)
				require.NoError(b, err)
				m.Release()
			}
		})
	}
}
