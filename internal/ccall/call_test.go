//go:build linux

package ccall_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/dlpack-go/dlpack/internal/ccall"
	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// libc opens the C library the process already has and returns the named functions.
func libc(t testing.TB, names ...string) map[string]uintptr {
	t.Helper()
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	fns := make(map[string]uintptr, len(names))
	for _, n := range names {
		p, err := purego.Dlsym(h, n)
		require.NoError(t, err, n)
		fns[n] = p
	}
	return fns
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// goString reads the NUL-terminated string at the start of b.
func goString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Every arity, against C functions whose results depend on every argument.
func TestArities(t *testing.T) {
	c := libc(t, "getpid", "strlen", "strchr", "memcpy", "memccpy", "socketpair", "getsockopt", "close",
		"memfd_create", "pwrite", "mmap", "munmap", "getnameinfo", "snprintf")
	t.Logf("trampoline: %s", ccall.Trampoline)

	t.Run("0 getpid", func(t *testing.T) {
		assert.Equal(t, uintptr(os.Getpid()), ccall.Call0(c["getpid"]))
	})
	t.Run("1 strlen", func(t *testing.T) {
		s := cstr("dlpack-go")
		assert.Equal(t, uintptr(9), ccall.Call1(c["strlen"], uintptr(unsafe.Pointer(&s[0]))))
	})
	t.Run("2 strchr", func(t *testing.T) {
		s := cstr("dlpack-go")
		got := ccall.Call2(c["strchr"], uintptr(unsafe.Pointer(&s[0])), 'p')
		assert.Equal(t, addr(s)+2, got)
		assert.Zero(t, ccall.Call2(c["strchr"], uintptr(unsafe.Pointer(&s[0])), 'z'))
	})
	t.Run("3 memcpy into Go memory", func(t *testing.T) {
		src, dst := []byte("abcdefgh"), make([]byte, 8)
		got := ccall.Call3(c["memcpy"], uintptr(unsafe.Pointer(&dst[0])), uintptr(unsafe.Pointer(&src[0])), 5)
		assert.Equal(t, addr(dst), got)
		assert.Equal(t, []byte("abcde\x00\x00\x00"), dst)
	})
	t.Run("4 memccpy", func(t *testing.T) {
		src, dst := []byte("key:value"), make([]byte, 9)
		got := ccall.Call4(c["memccpy"], uintptr(unsafe.Pointer(&dst[0])), uintptr(unsafe.Pointer(&src[0])), ':', 9)
		assert.Equal(t, addr(dst)+4, got, "one past the copied ':'")
		assert.Equal(t, []byte("key:\x00\x00\x00\x00\x00"), dst)
		assert.Zero(t, ccall.Call4(c["memccpy"], uintptr(unsafe.Pointer(&dst[0])), uintptr(unsafe.Pointer(&src[0])), '#', 9))
	})
	t.Run("4 socketpair, 5 getsockopt", func(t *testing.T) {
		const afUnix, sockStream, sockDgram, solSocket, soType = 1, 1, 2, 1, 3
		for _, typ := range []int32{sockStream, sockDgram} {
			var fds [2]int32
			require.Zero(t, int32(ccall.Call4(c["socketpair"], afUnix, uintptr(typ), 0, uintptr(unsafe.Pointer(&fds)))))
			var v, n int32 = -1, 4
			require.Zero(t, int32(ccall.Call5(c["getsockopt"], uintptr(fds[1]), solSocket, soType,
				uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&n)))))
			assert.Equal(t, typ, v)
			assert.Equal(t, int32(4), n)
			for _, fd := range fds {
				assert.Zero(t, int32(ccall.Call1(c["close"], uintptr(fd))))
			}
		}
	})
	t.Run("6 mmap at an offset", func(t *testing.T) {
		const protRead, mapShared = 1, 1
		page := uintptr(os.Getpagesize())
		name := cstr("ccall")
		fd := int32(ccall.Call2(c["memfd_create"], uintptr(unsafe.Pointer(&name[0])), 0))
		require.GreaterOrEqual(t, fd, int32(0))
		defer ccall.Call1(c["close"], uintptr(fd))
		for i, b := range []byte("AB") {
			buf := bytes.Repeat([]byte{b}, int(page))
			require.Equal(t, page, ccall.Call4(c["pwrite"], uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), page, uintptr(i)*page))
		}
		p := ccall.Call6(c["mmap"], 0, page, protRead, mapShared, uintptr(fd), page)
		require.NotEqual(t, ^uintptr(0), p, "mmap failed")
		m := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), page)
		assert.Equal(t, byte('B'), m[0], "the second page")
		assert.Equal(t, byte('B'), m[page-1])
		assert.Zero(t, int32(ccall.Call2(c["munmap"], p, page)))
	})
	t.Run("7 getnameinfo", func(t *testing.T) {
		// struct sockaddr_in: family (host order), port and address (network order), padding
		sa := make([]byte, 16)
		binary.LittleEndian.PutUint16(sa[0:], 2) // AF_INET
		binary.BigEndian.PutUint16(sa[2:], 8080)
		copy(sa[4:], []byte{127, 0, 0, 1})
		const numericHost, numericServ = 1, 2
		host, serv := make([]byte, 64), make([]byte, 32)
		rc := int32(ccall.Call7(c["getnameinfo"], uintptr(unsafe.Pointer(&sa[0])), 16, uintptr(unsafe.Pointer(&host[0])), 64,
			uintptr(unsafe.Pointer(&serv[0])), 32, numericHost|numericServ))
		require.Zero(t, rc)
		assert.Equal(t, "127.0.0.1", goString(host))
		assert.Equal(t, "8080", goString(serv))
		// the seventh argument (on the stack on amd64) is read: unknown flags are refused
		const eaiBadFlags = -1
		rc = int32(ccall.Call7(c["getnameinfo"], uintptr(unsafe.Pointer(&sa[0])), 16, uintptr(unsafe.Pointer(&host[0])), 64,
			uintptr(unsafe.Pointer(&serv[0])), 32, 1<<20))
		assert.Equal(t, int32(eaiBadFlags), rc)
	})
	// snprintf is variadic, which the package is not for; on linux/amd64 and linux/arm64 integer
	// arguments of a variadic call are passed exactly as for a fixed one (with AL = 0 on amd64),
	// which makes it a C function of eight and more arguments that shows where each one went.
	t.Run("8 snprintf", func(t *testing.T) {
		buf := make([]byte, 64)
		format := cstr("%d %d %d %d %d")
		n := ccall.Call8(c["snprintf"], uintptr(unsafe.Pointer(&buf[0])), 64, uintptr(unsafe.Pointer(&format[0])), 4, 5, 6, 7, 8)
		assert.Equal(t, "4 5 6 7 8", goString(buf))
		assert.Equal(t, uintptr(9), n)
	})
	t.Run("N", func(t *testing.T) {
		buf := make([]byte, 64)
		for _, bc := range []struct {
			format string
			args   []uintptr
			want   string
		}{
			{"x", nil, "x"},
			{"%d", []uintptr{1}, "1"},
			{"%d %d %d %d %d", []uintptr{1, 2, 3, 4, 5}, "1 2 3 4 5"},
			{"%d %d %d %d %d %d %d", []uintptr{1, 2, 3, 4, 5, 6, 7}, "1 2 3 4 5 6 7"}, // ten arguments: through purego
		} {
			// the addresses are taken before the call: the memory must be on the heap (pinning
			// puts it there) and reachable for the call
			format := cstr(bc.format)
			var pin runtime.Pinner
			pin.Pin(&buf[0])
			pin.Pin(&format[0])
			args := append([]uintptr{addr(buf), 64, addr(format)}, bc.args...)
			n := ccall.CallN(c["snprintf"], args...)
			runtime.KeepAlive(format)
			pin.Unpin()
			assert.Equal(t, bc.want, goString(buf))
			assert.Equal(t, uintptr(len(bc.want)), n)
		}
	})
}

// A call of address 0 panics, saying so, instead of faulting in C.
func TestNilFunction(t *testing.T) {
	assert.PanicsWithValue(t, "ccall: call of a nil C function", func() { ccall.Call0(0) })
	assert.PanicsWithValue(t, "ccall: call of a nil C function", func() { ccall.Call3(0, 1, 2, 3) })
	assert.PanicsWithValue(t, "ccall: call of a nil C function", func() { ccall.CallN(0, 1, 2) })
}

// Many goroutines calling at once, each into its own Go memory (run with -race).
func TestConcurrent(t *testing.T) {
	c := libc(t, "memcpy")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			src := bytes.Repeat([]byte{byte(g)}, 256)
			for i := range 2000 {
				dst := make([]byte, 256)
				ccall.Call3(c["memcpy"], uintptr(unsafe.Pointer(&dst[0])), uintptr(unsafe.Pointer(&src[0])), uintptr(i%256+1))
				if dst[i%256] != byte(g) || (i%256 < 255 && dst[i%256+1] != 0) {
					t.Errorf("goroutine %d, call %d: got %v", g, i, dst[:i%256+2])
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkCall: one call of a C function that does next to nothing (labs), through this package
// and through purego.SyscallN, side by side.
func BenchmarkCall(b *testing.B) {
	f := libc(b, "labs")["labs"]
	neg := ^uintptr(6) // -7
	b.Run("ccall.Call1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ccall.Call1(f, neg) != 7 {
				b.Fatal("labs(-7) != 7")
			}
		}
	})
	b.Run("purego.SyscallN", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r, _, _ := purego.SyscallN(f, neg); r != 7 {
				b.Fatal("labs(-7) != 7")
			}
		}
	})
}
