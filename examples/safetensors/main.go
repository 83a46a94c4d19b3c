// Command safetensors loads a small model's weights the way Go ML code does: Python (NumPy)
// writes them into a .safetensors file, Go opens the file by memory map (no element is read or
// copied), computes one layer with Gonum over the mapped memory, and feeds the same weights to
// ONNX Runtime as inputs.
//
// It needs Python with NumPy and ONNX ($PYTHON, else python3 on $PATH if it has both, else
// /usr/bin/python3 with Debian's python3-numpy and python3-onnx), and the ONNX Runtime library
// (run scripts/fetch-ort.sh, or set $ONNXRUNTIME_LIB).
//
//	go run ./examples/safetensors
package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/pyfind"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// python returns the interpreter that writes the weights and the model: $PYTHON, else python3 on
// $PATH (a venv, conda or pyenv interpreter) if it has NumPy and onnx, else Debian's, which
// scripts/setup.sh equips.
func python() string { return pyfind.Interpreter("numpy", "onnx") }

// writeWeights writes argv[1]: dense.weight [3, 2] and dense.bias [2] (float64, NumPy), in the
// safetensors format as its specification describes it (8-byte little-endian header length,
// JSON header padded to 8 bytes, raw little-endian C-order data), and a float32 embedding just
// to have more than one dtype in the file. Debian has no python3-safetensors, hence the few
// lines of format.
const writeWeights = `
import sys, json, struct
import numpy as np
ts = {
    'dense.weight': np.array([[1.0, -1.0], [0.5, 2.0], [-2.0, 0.25]]),
    'dense.bias': np.array([0.5, -0.5]),
    'embed.weight': np.arange(12, dtype=np.float32).reshape(4, 3),
}
code = {np.dtype('<f8'): 'F64', np.dtype('<f4'): 'F32'}
items = sorted(ts.items(), key=lambda kv: (-kv[1].dtype.itemsize, kv[0]))
hdr, off = {'__metadata__': {'format': 'np', 'writer': 'numpy ' + np.__version__}}, 0
for name, a in items:
    hdr[name] = {'dtype': code[a.dtype], 'shape': list(a.shape), 'data_offsets': [off, off + a.nbytes]}
    off += a.nbytes
js = json.dumps(hdr, separators=(',', ':')).encode()
js += b' ' * (-len(js) % 8)
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<Q', len(js)) + js + b''.join(np.ascontiguousarray(a).tobytes() for _, a in items))
`

// buildModel writes Y = Relu(X·W + B) to argv[1], with W and B as inputs, not initializers:
// the weights come from the safetensors file at run time.
const buildModel = `
import sys
from onnx import TensorProto, helper, save
g = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"]),
     helper.make_node("Relu", ["Z"], ["Y"])], "dense",
    [helper.make_tensor_value_info("X", TensorProto.DOUBLE, ["batch", 3]),
     helper.make_tensor_value_info("W", TensorProto.DOUBLE, [3, 2]),
     helper.make_tensor_value_info("B", TensorProto.DOUBLE, [2])],
    [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, ["batch", 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
save(m, sys.argv[1])
`

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(out io.Writer) error {
	dir, err := os.MkdirTemp("", "safetensors-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	weights, model := filepath.Join(dir, "dense.safetensors"), filepath.Join(dir, "dense.onnx")
	py := python()
	for _, step := range [][2]string{{writeWeights, weights}, {buildModel, model}} {
		if b, err := exec.Command(py, "-c", step[0], step[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("Python with NumPy and ONNX is needed (%s: apt-get install python3-numpy python3-onnx, or set $PYTHON to an interpreter with numpy and onnx): %v\n%s", py, err, b)
		}
	}

	// 1. Open by map: the header is parsed, nothing else is read; ZeroCopyOnly makes sure every
	// tensor is a view of the mapping.
	f, err := safetensorsx.Open(weights, adapters.ZeroCopyOnly())
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(out, "1 %s: tensors %v, metadata %v\n", filepath.Base(weights), f.Names(), f.Metadata())
	w, err := f.Tensor("dense.weight")
	if err != nil {
		return err
	}
	defer w.Release()
	b, err := f.Tensor("dense.bias")
	if err != nil {
		return err
	}
	defer b.Release()
	info, _ := f.Info("dense.weight")
	fmt.Fprintf(out, "  dense.weight %s %v at file offset %d: read-only view of the mapping: %t\n",
		info.Format, w.Shape(), f.Header().DataOffset+info.Begin, w.ReadOnly() && w.Foreign())

	// 2. One layer in Gonum over the mapped memory. gonumx.ToDense copies a read-only tensor
	// (a *mat.Dense is mutable), so here the Dense is built over core.ReadOnlyElements, under a
	// core.Hold, and only ever used as an operand Gonum reads: writing to it would fault.
	x := mat.NewDense(2, 3, []float64{1, 2, 3, -1, 0.5, 4})
	y, err := gonumLayer(x, w, b)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "2 Gonum: Y = Relu(X·W + B), W and B read where they are mapped: Y = %v\n", y.RawMatrix().Data)

	// 3. The same weights as ONNX Runtime inputs: onnxx shares read-only C-contiguous inputs
	// (ORT never writes inputs), so ORT reads the mapped pages.
	xt := core.MustFromSlice(x.RawMatrix().Data, 2, 3)
	res, err := onnxx.Run(model, map[string]*core.Tensor{"X": xt, "W": w, "B": b}, []string{"Y"})
	if err != nil {
		return err
	}
	got, err := core.ReadOnlyElements[float64](res["Y"])
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "3 ONNX Runtime: Y = %v, equal to Gonum's: %t\n", got, mat.Equal(y, mat.NewDense(2, 2, got)))
	return nil
}

// gonumLayer computes Relu(x·w + b) with Gonum, reading w and b where they lie.
func gonumLayer(x *mat.Dense, w, b *core.Tensor) (*mat.Dense, error) {
	h, err := core.Hold(w, b)
	if err != nil {
		return nil, err
	}
	defer h.Release()
	wd, err := core.ReadOnlyElements[float64](w)
	if err != nil {
		return nil, err
	}
	bd, err := core.ReadOnlyElements[float64](b)
	if err != nil {
		return nil, err
	}
	wm := mat.NewDense(int(w.Dim(0)), int(w.Dim(1)), wd)
	if unsafe.Pointer(&wm.RawMatrix().Data[0]) != w.Data() {
		return nil, fmt.Errorf("the Gonum matrix is not over the mapping")
	}
	var y mat.Dense
	y.Mul(x, wm)
	y.Apply(func(_, j int, v float64) float64 { return max(v+bd[j], 0) }, &y)
	return &y, nil
}
