package ccall

// errNilFunction is what a call of the function at address 0 panics with (rather than crash in
// C), on every platform.
const errNilFunction = "ccall: call of a nil C function"

// frame is what a call hands the trampoline: the function, its arguments (unused ones zero) and,
// after the call, its result. Its layout is read by the assembly (offsets 0, 8·(1+i), 72).
type frame struct {
	fn uintptr
	a  [MaxArgs]uintptr
	r  uintptr
}

// Call0 calls fn() and returns its result (garbage for a void function).
//
//go:uintptrescapes
func Call0(fn uintptr) uintptr {
	f := frame{fn: fn}
	return f.call(0)
}

// Call1 calls fn(a1) and returns its result.
//
//go:uintptrescapes
func Call1(fn, a1 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1}}
	return f.call(1)
}

// Call2 calls fn(a1, a2) and returns its result.
//
//go:uintptrescapes
func Call2(fn, a1, a2 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2}}
	return f.call(2)
}

// Call3 calls fn(a1, a2, a3) and returns its result.
//
//go:uintptrescapes
func Call3(fn, a1, a2, a3 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2, a3}}
	return f.call(3)
}

// Call4 calls fn(a1, …, a4) and returns its result.
//
//go:uintptrescapes
func Call4(fn, a1, a2, a3, a4 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2, a3, a4}}
	return f.call(4)
}

// Call5 calls fn(a1, …, a5) and returns its result.
//
//go:uintptrescapes
func Call5(fn, a1, a2, a3, a4, a5 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2, a3, a4, a5}}
	return f.call(5)
}

// Call6 calls fn(a1, …, a6) and returns its result.
//
//go:uintptrescapes
func Call6(fn, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2, a3, a4, a5, a6}}
	return f.call(6)
}

// Call7 calls fn(a1, …, a7) and returns its result.
//
//go:uintptrescapes
func Call7(fn, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2, a3, a4, a5, a6, a7}}
	return f.call(7)
}

// Call8 calls fn(a1, …, a8) and returns its result.
//
//go:uintptrescapes
func Call8(fn, a1, a2, a3, a4, a5, a6, a7, a8 uintptr) uintptr {
	f := frame{fn: fn, a: [MaxArgs]uintptr{a1, a2, a3, a4, a5, a6, a7, a8}}
	return f.call(8)
}

// CallN calls fn with args and returns its result: up to MaxArgs arguments through the same path
// as Call0 … Call8, more through purego.SyscallN (which takes up to 32). Conversions
// uintptr(unsafe.Pointer(p)) written in the call expression keep p's memory alive and in place, as
// for Call0 … Call8; addresses taken before the call (a slice passed as args...) must be of memory
// the caller keeps on the heap (pinned, or allocated there) and reachable until CallN returns.
//
//go:uintptrescapes
func CallN(fn uintptr, args ...uintptr) uintptr {
	if len(args) > MaxArgs {
		return callMany(fn, args)
	}
	f := frame{fn: fn}
	copy(f.a[:], args)
	return f.call(len(args))
}
