package adapters

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/dlpack-go/dlpack/core"
)

func TestDevPermuted(t *testing.T) {
	if os.Getenv("DEV") == "" {
		t.Skip()
	}
	for _, dt := range []core.DLDataType{core.Float64, core.Float32} {
		cols := int64(1024)
		if dt == core.Float32 {
			cols = 2048
		}
		a, _ := core.NewUninit(dt, 1024, cols)
		b, _ := a.Bytes()
		for i := range b {
			b[i] = byte(i)
		}
		r, _ := a.Reshape(16, 1024/16, 32, cols/32)
		v, _ := r.Permute(0, 3, 1, 2)
		dst, _ := core.NewUninit(dt, v.Shape()...)
		db, _ := dst.Bytes()
		for i := range db {
			db[i] = 1
		}
		run := func(name string, f func()) {
			best := time.Hour
			for range 30 {
				t0 := time.Now()
				f()
				best = min(best, time.Since(t0))
			}
			fmt.Printf("%s %s best %v\n", dt, name, best)
		}
		run("copy", func() { copy(db, b) })
		for _, sc := range []int{64, 128, 256, 512, 2048} {
			stripCols = sc
			run(fmt.Sprint("band ", sc), func() { Copy(dst, v) })
		}
		stripCols = 256
	}
}
