//go:build linux

package ccall_test

import (
	"fmt"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/ccall"
	"github.com/ebitengine/purego"
)

// Calling C's strlen on a Go string: the address is converted in the call expression, so the
// bytes stay where they are and alive for the call.
func Example() {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		fmt.Println(err)
		return
	}
	strlen, err := purego.Dlsym(libc, "strlen")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := []byte("dlpack-go\x00")
	fmt.Println(ccall.Call1(strlen, uintptr(unsafe.Pointer(&s[0]))))
	// Output: 9
}
