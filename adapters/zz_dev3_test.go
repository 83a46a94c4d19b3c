package adapters

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/core"
)

func TestDevStepped(t *testing.T) {
	if os.Getenv("DEV") == "" {
		t.Skip()
	}
	for _, dt := range []core.DLDataType{core.Float64, core.Float32} {
		cols := int64(1024)
		if dt == core.Float32 {
			cols = 2048
		}
		wide := core.MustNew(dt, 1024, 2*cols)
		b, _ := wide.Bytes()
		for i := range b {
			b[i] = byte(i)
		}
		v, _ := wide.Slice(1, core.Begin, core.End, 2)
		dst, _ := core.NewUninit(dt, 1024, cols)
		db, _ := dst.Bytes()
		for i := range db {
			db[i] = 1
		}
		run := func(name string, f func()) {
			best := time.Hour
			var all []time.Duration
			for range 30 {
				t0 := time.Now()
				f()
				d := time.Since(t0)
				all = append(all, d)
				best = min(best, d)
			}
			fmt.Printf("%s %s best %v  %v\n", dt, name, best, all[:6])
		}
		run("copy-wide-half", func() { copy(db, b[:len(db)]) })
		run("default", func() { Copy(dst, v) })
		saved := parallelBytes
		parallelBytes = 1 << 40
		run("serial", func() { Copy(dst, v) })
		h := haveStrip32
		haveStrip32 = false
		run("serial no avx", func() { Copy(dst, v) })
		haveStrip32 = h
		parallelBytes = saved
	}
}
