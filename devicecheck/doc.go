// Package devicecheck is everything that runs on the device machine (a Linux host with an NVIDIA
// GPU, PyTorch, CuPy and pyarrow), in one room: no product package imports anything here.
//
//   - devicebuild.sh builds, on a machine with Go, what the check runs into .devicebuild/ at the
//     repository's root: the GPU tests of gpu and gpu/cuda, safetensorsx's tests, and the
//     c-shared libraries cudalib, pyarrowlib (both here) and pyexchange/internal/testlib.
//   - devicecheck.sh, the one command, runs them on the device machine with no Go toolchain:
//     bash devicecheck/devicecheck.sh (after carrying .devicebuild/ along).
//   - check_cuda.py exchanges CUDA tensors between PyTorch, CuPy and Go through cudalib and the
//     product's Python package (dlpackgo); check_pyarrow.py checks the Arrow C Data Interface,
//     Flight and Parquet against pyarrow through pyarrowlib.
//   - cudalib and pyarrowlib are the Go sides of those checks, built with -buildmode=c-shared;
//     they import product packages (gpu, pyexchange, arrowx) and nothing else of this module.
//
// The Go tests of this package run the parts of the check that need no GPU on every machine:
// the scripts' host self-tests against the libraries (TestDeviceCheckHostPart,
// TestDeviceCheckPyarrow), and what devicebuild.sh records and devicecheck.sh reports of it
// (TestDeviceCheckSaysWhatWasBuilt), so that the device check cannot rot between device runs.
package devicecheck
