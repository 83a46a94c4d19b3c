package pyfind_test

import (
	"fmt"
	"os/exec"

	"github.com/dlpack-go/dlpack/pyfind"
)

// Run a NumPy step with the user's interpreter, and say which one and how to pick another
// when it has no NumPy.
func ExampleInterpreter() {
	py := pyfind.Interpreter("numpy")
	out, err := exec.Command(py, "-c", "import numpy as np; print(np.arange(4).reshape(2, 2).sum())").CombinedOutput()
	if err != nil {
		fmt.Printf("%s: NumPy is needed (set $PYTHON to an interpreter with NumPy, or activate a venv that has it): %v\n%s", py, err, out)
		return
	}
	fmt.Print(string(out))
	// Output: 6
}
