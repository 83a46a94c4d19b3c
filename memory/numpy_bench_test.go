package memory_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/numpyx"
)

// BenchmarkNumPyCopies times the copies a user would otherwise make in NumPy, side by side with
// NumPy's, in one run: Clone of contiguous, reversed, stepped, transposed and permuted views
// against copy() of the same views, Cast against astype, numpyx.ReadFile against np.load, at
// 8, 64 and 256 MiB of float64 and float32 (the size of the result; the stepped view takes every
// other column of an array twice as wide). NumPy runs in one Debian /usr/bin/python3 process per
// dtype and size (testdata/numpy_bench.py), which builds the same arrays; each repetition runs
// the Go operation and then NumPy's, so that both see the same load, and on the same processor:
// each repetition binds the Go side's thread and the Python process to one of the processors the
// benchmark may use, taking them in turn (the two vCPUs of the VM of BENCHMARKS.md's issue 20
// tables ran the same 8 MiB copy at speeds up to 1.7 times apart, and which process the
// scheduler put on which decided the ratio of a whole run). The goroutines a Go kernel starts
// run unbound, as a user's would. Every result is released (in NumPy: freed) after each
// repetition, outside the time.
//
// Metrics: ns/op and numpy-ns/op are medians over the repetitions, ratio is their quotient (below
// 1: we are faster); rss-MiB and numpy-rss-MiB are the most the resident set grew during one
// operation, over what it was just before (the first repetition starts with no cached block of
// NewUninit's, so it pays for its pages like NumPy's). Run with -benchtime=1x: the repetitions
// are the benchmark's own.
func BenchmarkNumPyCopies(b *testing.B) {
	for _, dt := range []core.DLDataType{core.Float64, core.Float32} {
		for _, size := range []int64{8 << 20, 64 << 20, 256 << 20} {
			b.Run(fmt.Sprintf("%s/%dMiB", dt, size>>20), func(b *testing.B) {
				benchNumPy(b, dt, size)
			})
		}
	}
}

func benchNumPy(b *testing.B, dt core.DLDataType, size int64) {
	n := size / int64(dt.Size())
	rows := int64(1024)
	if size > 8<<20 {
		rows = 4096 << (dt.Size() / 4 % 2) // 4096 rows of float64, 8192 of float32 (×8192 at 256 MiB)
	}
	cols := n / rows
	// the sources are allocated as NumPy's are: large blocks of mapped memory with huge pages
	// (NumPy 1.24 asks for them from 4 MiB), faulted in once, here
	a, err := memory.NewUninit(dt, rows, cols)
	require.NoError(b, err)
	wide, err := memory.NewUninit(dt, rows, 2*cols)
	require.NoError(b, err)
	require.NoError(b, iota(a))
	require.NoError(b, iota(wide))
	path := filepath.Join(b.TempDir(), "a.npy")
	require.NoError(b, numpyx.WriteFile(path, a))

	py := startNumPy(b, dt, rows, cols, path)
	defer py.close()

	view := func(f func() (*core.Tensor, error)) func() (*core.Tensor, error) {
		v, err := f()
		require.NoError(b, err)
		return func() (*core.Tensor, error) { return memory.Clone(v, memory.COrder) }
	}
	type bcase struct {
		name string
		op   func() (*core.Tensor, error)
	}
	cases := []bcase{
		{"contiguous", view(func() (*core.Tensor, error) { return a, nil })},
		{"reversed", view(func() (*core.Tensor, error) { return a.Reverse(0) })},
		{"stepped", view(func() (*core.Tensor, error) { return wide.Slice(1, core.Begin, core.End, 2) })},
		{"transposed", view(a.Transpose)},
		{"permuted", view(func() (*core.Tensor, error) {
			r, err := a.Reshape(16, rows/16, 32, cols/32)
			if err != nil {
				return nil, err
			}
			return r.Permute(0, 3, 1, 2)
		})},
	}
	if dt == core.Float64 {
		cases = append(cases, bcase{"cast-float32", func() (*core.Tensor, error) { return memory.Cast(a, core.Float32) }})
	} else {
		cases = append(cases, bcase{"cast-float16", func() (*core.Tensor, error) { return memory.Cast(a, core.Float16) }})
	}
	cases = append(cases, bcase{"load", func() (*core.Tensor, error) { return numpyx.ReadFile(path) }})

	reps := 51
	if size > 8<<20 {
		reps = 5
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// start cold: no cached block, as NumPy's first copy has no free memory of that size
			memory.SetAllocation(memory.SetAllocation(memory.Allocation{}))
			var goNs, pyNs []float64
			var goRSS, pyRSS int64
			cpus, rep := allowedCPUs(), 0
			for range b.N {
				for range reps {
					cpu := -1
					if len(cpus) > 0 {
						cpu = cpus[rep%len(cpus)]
					}
					rep++
					rss0, _ := rssNow(b)
					resetPeakRSS(b)
					var (
						r   *core.Tensor
						err error
						d   time.Duration
					)
					onCPU(cpu, func() {
						t0 := time.Now()
						r, err = c.op()
						d = time.Since(t0)
					})
					require.NoError(b, err)
					_, hwm := rssNow(b)
					r.Release()
					goNs = append(goNs, float64(d.Nanoseconds()))
					goRSS = max(goRSS, hwm-rss0)

					ns, rss := py.run(c.name, cpu)
					pyNs = append(pyNs, ns)
					pyRSS = max(pyRSS, rss)
				}
			}
			g, p := median(goNs), median(pyNs)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(g, "go-ns/op")
			b.ReportMetric(p, "numpy-ns/op")
			b.ReportMetric(g/p, "ratio")
			b.ReportMetric(float64(goRSS)/(1<<20), "rss-MiB")
			b.ReportMetric(float64(pyRSS)/(1<<20), "numpy-rss-MiB")
		})
	}
}

// iota writes 0, 1, 2, ... into the C-order tensor x.
func iota(x *core.Tensor) error {
	switch x.DType() {
	case core.Float64:
		v, err := core.Elements[float64](x)
		for i := range v {
			v[i] = float64(i)
		}
		return err
	case core.Float32:
		v, err := core.Elements[float32](x)
		for i := range v {
			v[i] = float32(i)
		}
		return err
	}
	return fmt.Errorf("iota of %s", x.DType())
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

// rssNow returns this process's resident set and its peak since the last resetPeakRSS, in bytes.
func rssNow(b *testing.B) (rss, hwm int64) {
	raw, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kib, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kib << 10
		case "VmHWM:":
			hwm = kib << 10
		}
	}
	return rss, hwm
}

func resetPeakRSS(b *testing.B) {
	require.NoError(b, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
}

// numPy is a running testdata/numpy_bench.py.
type numPy struct {
	b   *testing.B
	cmd *exec.Cmd
	in  *bufio.Writer
	out *bufio.Scanner
	w   interface{ Close() error }
}

func startNumPy(b *testing.B, dt core.DLDataType, rows, cols int64, path string) *numPy {
	b.Helper()
	cmd := exec.Command(pyrun.Interpreter, "testdata/numpy_bench.py", dt.String(), fmt.Sprint(rows), fmt.Sprint(cols), path)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	require.NoError(b, err)
	r, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start(), "the benchmark needs Debian's /usr/bin/python3 with python3-numpy")
	p := &numPy{b: b, cmd: cmd, in: bufio.NewWriter(w), out: bufio.NewScanner(r), w: w}
	require.True(b, p.out.Scan(), "numpy_bench.py did not start")
	require.Equal(b, "ready", p.out.Text())
	return p
}

// run has NumPy run one case on processor cpu (-1: any) and returns its nanoseconds and peak
// RSS growth in bytes.
func (p *numPy) run(name string, cpu int) (ns float64, rss int64) {
	fmt.Fprintln(p.in, name, cpu)
	require.NoError(p.b, p.in.Flush())
	require.True(p.b, p.out.Scan(), "numpy_bench.py stopped")
	_, err := fmt.Sscan(p.out.Text(), &ns, &rss)
	require.NoError(p.b, err, p.out.Text())
	return ns, rss
}

func (p *numPy) close() {
	p.w.Close()
	require.NoError(p.b, p.cmd.Wait())
}
