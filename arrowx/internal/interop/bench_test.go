package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
)

// The benchmark's column: benchRows tensors of [benchDim] float32, 256 MiB.
const (
	benchRows = 65536
	benchDim  = 1024
)

// benchFiles returns the benchmark's two Parquet files of the same column, one written by
// arrow-go (parquetx.WriteFile) and one by arrow-rs (parquet-wasm), made once into the user's
// cache directory (not the repository) and reused.
func benchFiles(b *testing.B) (arrowGo, parquetWasm string) {
	b.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "dlpack-go", "bench", "interop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	stem := fmt.Sprintf("fixed_shape-float32-%dx%d", benchRows, benchDim)
	arrowGo = filepath.Join(dir, stem+"-arrow-go.parquet")
	parquetWasm = filepath.Join(dir, stem+"-parquet-wasm.parquet")
	if _, err := os.Stat(arrowGo); err != nil {
		x, err := core.New(core.Float32, benchRows, benchDim)
		if err != nil {
			b.Fatal(err)
		}
		v, err := core.Elements[float32](x)
		if err != nil {
			b.Fatal(err)
		}
		for k := range v {
			v[k] = float32(float64(uint32(k)*2654435761)/4294967296 - 0.5)
		}
		err = parquetx.WriteFile(arrowGo, []parquetx.Column{{Name: tensorColumn, Tensor: x}})
		x.Release()
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := os.Stat(parquetWasm); err != nil {
		node := jsNode(b)
		src, err := os.ReadFile(filepath.Join("testdata", "bench_parquet_wasm.js"))
		if err != nil {
			b.Fatal(err)
		}
		tmp := parquetWasm + ".tmp"
		node.Run(b, string(src), tmp, fmt.Sprint(benchRows), fmt.Sprint(benchDim))
		if err := os.Rename(tmp, parquetWasm); err != nil {
			b.Fatal(err)
		}
	}
	return arrowGo, parquetWasm
}

// BenchmarkInteropParquetRead reads a 256 MiB arrow.fixed_shape_tensor column ([65536, 1024]
// float32) with parquetx.ReadFile from a file arrow-rs wrote (parquet-wasm) and from one arrow-go
// wrote, side by side with os.ReadFile of each file, and the two files read alternately
// (parquetx/paired: wasm/go is the ratio of their times, wasm/go-cpu of the process's CPU time
// for each, which other processes' load leaves alone). Throughput is of the tensor's bytes.
func BenchmarkInteropParquetRead(b *testing.B) {
	arrowGo, parquetWasm := benchFiles(b)
	// the two files hold the same tensor
	x, err := parquetx.ReadFile(arrowGo, tensorColumn)
	if err != nil {
		b.Fatal(err)
	}
	y, err := parquetx.ReadFile(parquetWasm, tensorColumn)
	if err != nil {
		b.Fatal(err)
	}
	xb, _ := x.ReadOnlyBytes()
	yb, _ := y.ReadOnlyBytes()
	if string(xb) != string(yb) {
		b.Fatal("the arrow-go and parquet-wasm files hold different tensors")
	}
	x.Release()
	y.Release()
	// the two files read alternately, each iteration in the other order: the ratio of their
	// times is paired, whatever the machine's load does meanwhile
	b.Run("parquetx/paired", func(b *testing.B) {
		b.SetBytes(2 * benchRows * benchDim * 4)
		var spent, cpu [2]time.Duration
		i := 0
		for b.Loop() {
			for j := range 2 {
				k := (i + j) % 2
				start, c0 := time.Now(), cpuTime()
				t, err := parquetx.ReadFile([]string{arrowGo, parquetWasm}[k], tensorColumn)
				if err != nil {
					b.Fatal(err)
				}
				t.Release()
				spent[k] += time.Since(start)
				cpu[k] += cpuTime() - c0
			}
			i++
		}
		b.ReportMetric(float64(spent[0].Nanoseconds())/float64(i), "arrow-go-ns/op")
		b.ReportMetric(float64(spent[1].Nanoseconds())/float64(i), "parquet-wasm-ns/op")
		b.ReportMetric(float64(spent[1])/float64(spent[0]), "wasm/go")
		if cpu[0] > 0 { // CPU time, which other processes' load leaves alone
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "wasm/go-cpu")
		}
	})
	for _, f := range []struct{ name, path string }{{"arrow-go", arrowGo}, {"parquet-wasm", parquetWasm}} {
		st, err := os.Stat(f.path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("parquetx/"+f.name, func(b *testing.B) {
			b.SetBytes(benchRows * benchDim * 4)
			for b.Loop() {
				t, err := parquetx.ReadFile(f.path, tensorColumn)
				if err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
		})
		b.Run("os.ReadFile/"+f.name, func(b *testing.B) {
			b.SetBytes(benchRows * benchDim * 4)
			for b.Loop() {
				if _, err := os.ReadFile(f.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
