// Command tour takes one small matrix through every path dlpack-go offers, in one run, and says
// at each hop where the data went and whether it was copied, with the proof: Gonum → Gorgonia
// over the same memory (a write through one is read by the other) → ONNX Runtime, which reads the
// matrix in place and writes its answer into a Gonum matrix → a .npy file that NumPy reads back
// → a CUDA device and back, when there is one.
//
// On a fresh Debian 12 machine with Go:
//
//	bash scripts/setup.sh && go run ./examples/tour
//
// The ONNX model is written by this program (package tinyonnx encodes the protobuf by hand), so
// the tour needs the ONNX Runtime library and NumPy ($PYTHON names an interpreter of your own
// with it; else python3 on $PATH if it has NumPy, else Debian's /usr/bin/python3), and no Python
// ONNX. When something is missing the tour says what and exits with status 1.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := tour(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		os.Exit(1)
	}
}
