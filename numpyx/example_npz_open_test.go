package numpyx_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

// NPZ.Open streams one array of an archive, here summed eight bytes at a time, without ever
// holding the array whole; MaxInflated bounds what an untrusted archive may inflate.
func ExampleNPZ_Open() {
	var buf bytes.Buffer
	w := numpyx.NewNPZWriter(&buf, numpyx.Compressed())
	if err := w.Write("x", core.MustFromSlice([]float64{1, 2, 3, 4})); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	z, err := numpyx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), numpyx.MaxInflated(1<<30))
	if err != nil {
		fmt.Println(err)
		return
	}
	h, rc, err := z.Open("x")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	sum, word := 0.0, make([]byte, 8)
	for {
		if _, err := io.ReadFull(rc, word); err == io.EOF {
			break // the member's checksum matched
		} else if err != nil {
			fmt.Println(err)
			return
		}
		sum += math.Float64frombits(binary.LittleEndian.Uint64(word))
	}
	fmt.Println(h.Descr, h.Shape, sum)
	// Output:
	// <f8 [4] 10
}
