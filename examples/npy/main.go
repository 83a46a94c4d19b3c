// Command npy loads an array that NumPy wrote, computes with it in Gonum without copying, saves
// the result for NumPy, and has NumPy check it.
//
// It runs Python ($PYTHON, else python3 on $PATH or Debian's /usr/bin/python3, whichever has
// NumPy) to write the input (a 4×3 float64
// matrix, saved in Fortran order) and to verify the output. Without an interpreter that has NumPy
// it writes the input itself, says so, and skips the NumPy check.
package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/memory"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/pyfind"
)

// python is the interpreter: $PYTHON, else python3 on $PATH (a venv, conda or pyenv interpreter)
// if it has NumPy, else Debian's, which scripts/setup.sh gives python3-numpy.
var python = pyfind.Interpreter("numpy")

func main() {
	dir, err := os.MkdirTemp("", "npy-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "a.npy"), filepath.Join(dir, "gram.npy")
	havePython := exec.Command(python, "-c", "import numpy").Run() == nil

	// 1. NumPy writes the input.
	if havePython {
		run(python, "-c", `import sys, numpy as np
a = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(4, 3) / 4)
np.save(sys.argv[1], a)
print("numpy wrote", a.shape, a.dtype, "fortran" if a.flags.f_contiguous else "C")`, in)
	} else {
		fmt.Printf("no NumPy in %s (set $PYTHON to an interpreter with NumPy): writing the input from Go instead\n", python)
		v := make([]float64, 12)
		for i := range v {
			v[i] = float64(i) / 4
		}
		must(numpyx.WriteFile(in, core.MustFromSlice(v, 4, 3)))
	}

	// 2. Read it. A Fortran-order file reads Fortran-strided; Gonum wants row-major, so make
	//    it C-contiguous (a copy only when the file was in Fortran order).
	a, err := numpyx.ReadFile(in)
	must(err)
	fmt.Println("read", a)
	if !a.IsContiguous() {
		a, err = memory.Contiguous(a)
		must(err)
	}

	// 3. Gonum over the tensor's memory: mat.NewDense on core.Elements shares it, no copy.
	data, err := core.Elements[float64](a)
	must(err)
	r, c := int(a.Dim(0)), int(a.Dim(1))
	A := mat.NewDense(r, c, data)
	must(core.Attach(A, a))
	var G mat.Dense
	G.Mul(A.T(), A) // the Gram matrix AᵀA, 3×3
	fmt.Printf("AᵀA = %v\n", mat.Formatted(&G, mat.Prefix("      ")))

	// 4. Save the result: the Dense's backing slice is a tensor without a copy.
	raw := G.RawMatrix()
	g, err := core.FromSlice(raw.Data, int64(raw.Rows), int64(raw.Cols))
	must(err)
	must(numpyx.WriteFile(out, g))

	// 5. NumPy checks it.
	if havePython {
		run(python, "-c", `import sys, numpy as np
a = np.load(sys.argv[1]); g = np.load(sys.argv[2])
assert np.allclose(g, a.T @ a), (g, a.T @ a)
print("numpy agrees: AᵀA", g.shape, g.dtype)`, in, out)
	} else {
		fmt.Printf("no NumPy in %s: NumPy check skipped\n", python)
	}
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	must(cmd.Run())
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
