// Command emptylib is a c-shared library that imports pyexchange and registers no function: the
// kind of library whose functions are all hand-exported (//export, called through
// dlpackgo.Library.cdll). The Python tests load it to check that such a library opens, and load
// it next to testlib to check the error for a second Go library in one process. Build it with
//
//	go build -buildmode=c-shared -o libdlpackgo_empty.so ./pyexchange/internal/emptylib
package main

import "C"

import _ "github.com/dlpack-go/dlpack/pyexchange"

func main() {}
