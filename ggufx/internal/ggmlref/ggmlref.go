// Package ggmlref calls ggml's own library, libggml-base.so (scripts/fetch-ggml.sh caches the build
// that the npm package @node-llama-cpp/linux-x64 ships), so that ggufx's tests compare its
// dequantizers and quantizers with ggml's dequantize_row_<type> and ggml_quantize_chunk bit for bit.
// It loads the library with purego (no cgo) and is for tests only: nothing in ggufx imports it.
package ggmlref

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/dlpack-go/dlpack/internal/ccall"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// Lib is a loaded libggml-base.so.
type Lib struct {
	Path string

	h uintptr // the library's handle, from Open

	typeSize, blckSize, requiresImatrix, quantizeInit, quantizeChunk uintptr
	typeName                                                         func(int32) string

	mu  sync.Mutex
	deq map[int]uintptr
}

var (
	loadOnce sync.Once
	loaded   *Lib
	loadErr  error
)

// Load returns ggml's library, fetching it with scripts/fetch-ggml.sh the first time; where it cannot
// be had the test fails in CI and is skipped elsewhere (refcheck.Unavailable).
func Load(tb testing.TB) *Lib {
	tb.Helper()
	loadOnce.Do(func() {
		// Script ends the first test (refcheck.Unavailable) where the script fails, and the Once
		// is done all the same: the later ones are told so, not handed a nil Lib.
		loadErr = errors.New("scripts/fetch-ggml.sh failed (the first test that loaded the library says why)")
		path := refcheck.Script(tb, "scripts/fetch-ggml.sh")
		if path == "" {
			loadErr = fmt.Errorf("scripts/fetch-ggml.sh gave no path")
			return
		}
		loaded, loadErr = Open(path)
	})
	if loadErr != nil {
		refcheck.Unavailable(tb, "ggml's library: %v", loadErr)
	}
	return loaded
}

// Open loads the library at path.
func Open(path string) (*Lib, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("ggmlref: dlopen %s: %w", path, err)
	}
	l := &Lib{Path: path, h: h, deq: map[int]uintptr{}}
	for name, p := range map[string]*uintptr{
		"ggml_type_size":                 &l.typeSize,
		"ggml_blck_size":                 &l.blckSize,
		"ggml_quantize_requires_imatrix": &l.requiresImatrix,
		"ggml_quantize_init":             &l.quantizeInit,
		"ggml_quantize_chunk":            &l.quantizeChunk,
	} {
		if *p, err = purego.Dlsym(h, name); err != nil {
			return nil, fmt.Errorf("ggmlref: %s in %s: %w", name, path, err)
		}
	}
	purego.RegisterLibFunc(&l.typeName, h, "ggml_type_name")
	return l, nil
}

// TypeSize is ggml_type_size(t): the bytes of one block.
func (l *Lib) TypeSize(t int) int { return int(ccall.Call1(l.typeSize, uintptr(t))) }

// BlockSize is ggml_blck_size(t): the elements of one block.
func (l *Lib) BlockSize(t int) int { return int(int64(ccall.Call1(l.blckSize, uintptr(t)))) }

// TypeName is ggml_type_name(t), as ggml spells it ("q4_K", "iq2_xxs"); "" where ggml has none.
func (l *Lib) TypeName(t int) string { return l.typeName(int32(t)) }

// RequiresImatrix is ggml_quantize_requires_imatrix(t): ggml_quantize_chunk aborts the process for
// such a type when given no importance matrix.
func (l *Lib) RequiresImatrix(t int) bool {
	return byte(ccall.Call1(l.requiresImatrix, uintptr(t))) != 0
}

func (l *Lib) dequantizer(t int) (uintptr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fn, ok := l.deq[t]; ok {
		return fn, nil
	}
	name := "dequantize_row_" + l.TypeName(t)
	fn, err := purego.Dlsym(l.h, name)
	if err != nil {
		return 0, fmt.Errorf("ggmlref: type %d: %s: %w", t, name, err)
	}
	l.deq[t] = fn
	return fn, nil
}

// Dequantize runs dequantize_row_<type>(src, dst, len(dst)): len(dst) must be a multiple of the
// type's block size and src hold that many blocks.
func (l *Lib) Dequantize(t int, src []byte, dst []float32) error {
	bs, ts := l.BlockSize(t), l.TypeSize(t)
	if bs <= 0 || len(dst)%bs != 0 || len(src) < len(dst)/bs*ts {
		return fmt.Errorf("ggmlref: type %d: %d elements need blocks of %d, %d bytes of %d-byte blocks given", t, len(dst), bs, len(src), ts)
	}
	if len(dst) == 0 {
		return nil
	}
	fn, err := l.dequantizer(t)
	if err != nil {
		return err
	}
	ccall.Call3(fn, uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])), uintptr(len(dst)))
	return nil
}

// Quantize runs ggml_quantize_chunk(t, src, dst, 0, nrows, perRow, imatrix) and returns the blocks.
// imatrix (perRow weights) may be nil except for the types that require one.
func (l *Lib) Quantize(t int, src []float32, nrows, perRow int, imatrix []float32) ([]byte, error) {
	bs, ts := l.BlockSize(t), l.TypeSize(t)
	if bs <= 0 || perRow%bs != 0 || nrows*perRow != len(src) || len(src) == 0 {
		return nil, fmt.Errorf("ggmlref: type %d: %d×%d of %d floats in blocks of %d", t, nrows, perRow, len(src), bs)
	}
	if imatrix == nil && l.RequiresImatrix(t) {
		return nil, fmt.Errorf("ggmlref: type %d (%s) needs an importance matrix", t, l.TypeName(t))
	}
	if imatrix != nil && len(imatrix) != perRow {
		return nil, fmt.Errorf("ggmlref: imatrix of %d for rows of %d", len(imatrix), perRow)
	}
	dst := make([]byte, len(src)/bs*ts)
	var im uintptr
	if imatrix != nil {
		im = uintptr(unsafe.Pointer(&imatrix[0]))
	}
	ccall.Call1(l.quantizeInit, uintptr(t))
	n := ccall.Call7(l.quantizeChunk, uintptr(t), uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])),
		0, uintptr(nrows), uintptr(perRow), im)
	if int(n) != len(dst) {
		return nil, fmt.Errorf("ggmlref: ggml_quantize_chunk wrote %d bytes, %d expected", n, len(dst))
	}
	return dst, nil
}
