//go:build linux || darwin

package gopeers_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	st "github.com/nlpodyssey/safetensors"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// sparseFile writes a file holding one float32 tensor of size bytes: the header, then a
// Truncate to the full length, so that a 1 GiB file takes no disk space.
func sparseFile(b *testing.B, size int64) string {
	h := `{"w":{"dtype":"F32","shape":[` + strconv.FormatInt(size/4, 10) + `],"data_offsets":[0,` + strconv.FormatInt(size, 10) + `]}}`
	for len(h)%8 != 0 {
		h += " "
	}
	path := filepath.Join(b.TempDir(), "sparse.safetensors")
	f, err := os.Create(path)
	require.NoError(b, err)
	_, err = f.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(h))))
	require.NoError(b, err)
	_, err = f.WriteString(h)
	require.NoError(b, err)
	require.NoError(b, f.Truncate(int64(8+len(h))+size))
	require.NoError(b, f.Close())
	return path
}

// BenchmarkOpen opens a file by map and takes its tensor: the cost does not grow with the
// file (1 MiB vs 1 GiB).
func BenchmarkOpen(b *testing.B) {
	for _, size := range []int64{1 << 20, 1 << 30} {
		path := sparseFile(b, size)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			for b.Loop() {
				f, err := safetensorsx.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				x, err := f.Tensor("w")
				if err != nil {
					b.Fatal(err)
				}
				x.Release()
				f.Close()
			}
		})
	}
}

// modelFile writes a file of n float32 tensors of per bytes each, of random data.
func modelFile(b *testing.B, n, per int) (string, int64) {
	shapes := map[string][]int64{}
	for i := range n {
		shapes[fmt.Sprintf("model.layers.%d.weight", i)] = []int64{int64(per / 4)}
	}
	return writeShapes(b, shapes)
}

// llmFile writes a file laid out like a small transformer's weights: 18 layers of width 320
// (attention q, k, v, o 320x320 with biases, MLP 320x1280 and 1280x320 with biases, two layer
// norms), an 8000x320 embedding and a final norm: 290 float32 tensors, 94 MiB, from 1.25 KiB
// to 9.8 MiB.
func llmFile(b *testing.B) (string, int64) {
	const layers, d, ff, vocab = 18, 320, 1280, 8000
	shapes := map[string][]int64{
		"model.embed_tokens.weight": {vocab, d},
		"model.norm.weight":         {d},
	}
	for l := range layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		for _, m := range []string{"q_proj", "k_proj", "v_proj", "o_proj"} {
			shapes[p+"self_attn."+m+".weight"] = []int64{d, d}
			shapes[p+"self_attn."+m+".bias"] = []int64{d}
		}
		shapes[p+"mlp.up_proj.weight"] = []int64{ff, d}
		shapes[p+"mlp.up_proj.bias"] = []int64{ff}
		shapes[p+"mlp.down_proj.weight"] = []int64{d, ff}
		shapes[p+"mlp.down_proj.bias"] = []int64{d}
		for _, n := range []string{"input_layernorm", "post_attention_layernorm"} {
			shapes[p+n+".weight"] = []int64{d}
			shapes[p+n+".bias"] = []int64{d}
		}
	}
	return writeShapes(b, shapes)
}

// writeShapes writes a file of float32 tensors of the given shapes, of random data.
func writeShapes(b *testing.B, shapes map[string][]int64) (string, int64) {
	rng := rand.New(rand.NewPCG(3, 4))
	ts := map[string]*core.Tensor{}
	for name, shape := range shapes {
		x := core.MustNew(core.Float32, shape...)
		data, err := core.Elements[float32](x)
		require.NoError(b, err)
		for k := range data {
			data[k] = rng.Float32()
		}
		ts[name] = x
	}
	path := filepath.Join(b.TempDir(), "model.safetensors")
	require.NoError(b, safetensorsx.WriteFile(path, ts, map[string]string{"format": "pt"}))
	fi, err := os.Stat(path)
	require.NoError(b, err)
	return path, fi.Size()
}

// cpuTime is the CPU time (user + system) this process has used: on a loaded machine wall time
// measures the queue for the CPUs as much as the work, so the ReadAll benchmarks report both.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// withCPU runs f b.N times and reports its CPU time per op as cpu-ns/op.
func withCPU(b *testing.B, f func()) {
	start := cpuTime()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(n), "cpu-ns/op")
}

// BenchmarkReadAll reads every tensor of a file into Go memory: this package, the Go peer
// (os.ReadFile then its Deserialize, whose tensors are views of the one buffer), and
// os.ReadFile alone, on 64 tensors of 1 MiB, on 20,000 tensors of 256 bytes and on the layout
// of a small transformer (llmFile: 290 tensors of mixed sizes, 94 MiB).
func BenchmarkReadAll(b *testing.B) {
	for _, c := range []struct{ n, per int }{{64, 1 << 20}, {20000, 256}, {290, 0}} {
		name := fmt.Sprintf("%dx%dB", c.n, c.per)
		var path string
		var size int64
		if c.per == 0 {
			name = "llm290"
			path, size = llmFile(b)
		} else {
			path, size = modelFile(b, c.n, c.per)
		}
		// every contender starts from the same state: the file in the page cache, a collected heap
		if _, err := os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.Run(name+"/safetensorsx", func(b *testing.B) {
			b.SetBytes(size)
			withCPU(b, func() {
				ts, err := safetensorsx.ReadFile(path)
				if err != nil || len(ts) != c.n {
					b.Fatal(err)
				}
			})
		})
		b.Run(name+"/nlpodyssey", func(b *testing.B) {
			b.SetBytes(size)
			withCPU(b, func() {
				buf, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				s, err := st.Deserialize(buf)
				if err != nil || len(s.Tensors()) != c.n {
					b.Fatal(err)
				}
			})
		})
		b.Run(name+"/os.ReadFile", func(b *testing.B) {
			b.SetBytes(size)
			withCPU(b, func() {
				if _, err := os.ReadFile(path); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(name+"/Map", func(b *testing.B) {
			b.SetBytes(size)
			withCPU(b, func() {
				ts, err := safetensorsx.Map(path)
				if err != nil || len(ts) != c.n {
					b.Fatal(err)
				}
				for _, x := range ts {
					x.Release()
				}
			})
		})
	}
}

// BenchmarkParseHeader parses the header of a file of 20,000 tensors (1.8 MB of JSON).
func BenchmarkParseHeader(b *testing.B) {
	path, _ := modelFile(b, 20000, 256)
	data, err := os.ReadFile(path)
	require.NoError(b, err)
	hdr := data[8 : 8+binary.LittleEndian.Uint64(data)]
	b.SetBytes(int64(len(hdr)))
	for b.Loop() {
		if _, err := safetensorsx.ParseHeader(hdr); err != nil {
			b.Fatal(err)
		}
	}
}

// freshEnv names the environment variable that makes TestFreshReadChild read a file once, in a
// process of its own, for BenchmarkReadFileFresh: "contender:path".
const freshEnv = "SAFETENSORSX_FRESH_READ"

// TestFreshReadChild is the child process of BenchmarkReadFileFresh: with freshEnv set it reads
// the file once with the contender named there and prints the CPU and wall time of that read
// in nanoseconds; without, it does nothing (it is not a test of its own).
func TestFreshReadChild(t *testing.T) {
	spec := os.Getenv(freshEnv)
	if spec == "" {
		return
	}
	contender, path, _ := strings.Cut(spec, ":")
	c0, w0 := cpuTime(), time.Now()
	n := 0
	switch contender {
	case "safetensorsx":
		ts, err := safetensorsx.ReadFile(path)
		require.NoError(t, err)
		n = len(ts)
	case "nlpodyssey":
		buf, err := os.ReadFile(path)
		require.NoError(t, err)
		s, err := st.Deserialize(buf)
		require.NoError(t, err)
		n = len(s.Tensors())
	case "os.ReadFile":
		buf, err := os.ReadFile(path)
		require.NoError(t, err)
		n = len(buf)
	default:
		t.Fatalf("unknown contender %q", contender)
	}
	require.Positive(t, n)
	fmt.Printf("fresh-read %d %d\n", (cpuTime() - c0).Nanoseconds(), time.Since(w0).Nanoseconds())
}

// BenchmarkReadFileFresh reads a file once per process, as a program that loads its weights
// does: each op starts this test binary anew (TestFreshReadChild), which reads the transformer
// layout (llmFile) once, and reports the CPU and wall time of that read alone (read-cpu-ns/op,
// read-ns/op; ns/op is mostly the process start). The memory the read takes is new to the
// process every time: the Go heap grows, core's cache of mapped blocks is empty.
func BenchmarkReadFileFresh(b *testing.B) {
	path, _ := llmFile(b)
	if _, err := os.ReadFile(path); err != nil { // in the page cache
		b.Fatal(err)
	}
	for _, contender := range []string{"safetensorsx", "nlpodyssey", "os.ReadFile"} {
		b.Run("llm290/"+contender, func(b *testing.B) {
			var cpu, wall int64
			n := 0
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFreshReadChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), freshEnv+"="+contender+":"+path)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				var c, w int64
				line := out[bytes.Index(out, []byte("fresh-read ")):]
				if _, err := fmt.Sscanf(string(line), "fresh-read %d %d", &c, &w); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cpu, wall, n = cpu+c, wall+w, n+1
			}
			b.ReportMetric(float64(cpu)/float64(n), "read-cpu-ns/op")
			b.ReportMetric(float64(wall)/float64(n), "read-ns/op")
		})
	}
}
