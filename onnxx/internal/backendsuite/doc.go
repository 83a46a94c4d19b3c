// Package backendsuite runs ONNX's own backend test data (Debian's libonnx-testdata: every model
// of the categories node, simple, pytorch-converted and pytorch-operator, with its
// test_data_set_*/input_*.pb and output_*.pb) through package onnxx and, on the same ONNX Runtime
// release, through ONNX Runtime's own Python package, and compares both with the expected outputs
// as ONNX's test runner does (the same dtype; |got - want| ≤ 1e-7 + 1e-3·|want| element by
// element, NaN equal to NaN). It has tests only.
//
// convert.py (Debian's python3-onnx) turns the protobuf tensors into raw files and a manifest;
// ort_run.py (the project's venv, onnxruntime from PyPI) runs ORT's Python binding over them;
// TestBackendSuite runs onnxx, one subtest per case, and counts per category: both pass (the
// subtest passes), only onnxx fails (it fails), only ORT's binding fails and both fail (it is
// skipped with the reasons), and the cases whose inputs or outputs are not numeric tensors
// (sequences, optionals, strings), which onnxx does not pass (skipped, saying so).
package backendsuite
